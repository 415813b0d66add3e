//! A TCP forwarder for fault injection: between a client and a real service,
//! it passes bytes both ways and can be told to cut a connection right after
//! the server answered a request that contains given bytes (the reply is lost).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct Proxy {
    pub addr: String,
    /// Armed: the next request containing `needle` is forwarded, its reply
    /// swallowed, and the connection closed. Disarms itself.
    pub armed: Arc<AtomicBool>,
}

impl Proxy {
    /// Forwards connections on `listener` to `target`.
    pub async fn start(listener: TcpListener, target: String, needle: Vec<u8>) -> Self {
        let addr = listener.local_addr().unwrap().to_string();
        let armed = Arc::new(AtomicBool::new(false));
        let trap = Arc::clone(&armed);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&target).await else { continue };
                tokio::spawn(pipe(client, server, needle.clone(), Arc::clone(&trap)));
            }
        });
        Self { addr, armed }
    }
}

async fn pipe(client: TcpStream, server: TcpStream, needle: Vec<u8>, armed: Arc<AtomicBool>) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut server_rx, mut server_tx) = server.into_split();
    let cut = Arc::new(AtomicBool::new(false));
    let cut_up = Arc::clone(&cut);
    let up = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match client_rx.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let hit = !needle.is_empty()
                && buf[..n].windows(needle.len()).any(|w| w == needle.as_slice())
                && armed.swap(false, Ordering::SeqCst);
            if hit {
                // From now on nothing reaches the client: the server runs the
                // request and its answer is dropped with the connection.
                cut_up.store(true, Ordering::SeqCst);
            }
            if server_tx.write_all(&buf[..n]).await.is_err() {
                return;
            }
            if hit {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                return;
            }
        }
    };
    let down = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match server_rx.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if cut.load(Ordering::SeqCst) || client_tx.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    };
    tokio::join!(up, down);
}
