//! A TCP forwarder that can take a service away: while cut, every open
//! connection is closed and new ones are closed at once, as when the server
//! is down; restored, it forwards again.

use std::sync::Arc;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Outage {
    pub addr: String,
    down: watch::Sender<bool>,
}

impl Outage {
    /// Forwards a local port to `target`.
    pub async fn start(target: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (down, watch) = watch::channel(false);
        let target = Arc::new(target);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if *watch.borrow() {
                    continue; // dropped: closed at once
                }
                let (target, mut watch) = (Arc::clone(&target), watch.clone());
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target.as_str()).await else { return };
                    tokio::select! {
                        _ = copy_bidirectional(&mut client, &mut server) => {}
                        _ = watch.wait_for(|down| *down) => {}
                    }
                });
            }
        });
        Self { addr, down }
    }

    pub fn cut(&self) {
        self.down.send_replace(true);
    }

    pub fn restore(&self) {
        self.down.send_replace(false);
    }
}
