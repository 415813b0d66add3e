//! The two-level cache's own promises, on the real Redis: the rebuild lock,
//! a cache that must not serve stale data waiting for its one rebuild, and
//! one that serves its old value only while the source is down.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cityhub_platform::cache::{lock, Cache, Caches, FnLoader, Freshness, LoadError, Spec};
use cityhub_testkit::TestEnv;
use futures::future::join_all;
use redis::AsyncCommands;

#[tokio::test]
async fn a_lock_holder_whose_lease_expired_cannot_release_the_next_holders_lock() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let key = kv.keys.cache_lock("test", "1");
    let first = lock::try_acquire(&kv, key.clone(), Duration::from_millis(100)).await.unwrap().expect("free");
    assert!(lock::try_acquire(&kv, key.clone(), Duration::from_secs(5)).await.unwrap().is_none(), "held");

    tokio::time::sleep(Duration::from_millis(250)).await;
    let second = lock::try_acquire(&kv, key.clone(), Duration::from_secs(5)).await.unwrap();
    let second = second.expect("free once the first lease ran out");
    assert!(!first.release(&kv).await.unwrap(), "the first holder learns it no longer held the lock");
    assert!(kv.conn().exists::<_, bool>(&key).await.unwrap(), "the second holder's lock survives");
    assert!(second.release(&kv).await.unwrap());
    assert!(!kv.conn().exists::<_, bool>(&key).await.unwrap());
}

/// A source of truth whose value the test changes, counting its loads; each
/// load takes a while, as a slow query would.
struct Source {
    value: AtomicU64,
    loads: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_that_must_not_see_stale_data_wait_for_one_load_and_get_the_new_value() {
    let mut env = TestEnv::new();
    env.settings.cache.jitter_percent = 0;
    let kv = env.kv().await;
    let caches = Caches::new(&kv, &env.settings.cache);
    let source = Arc::new(Source { value: AtomicU64::new(1), loads: AtomicU64::new(0) });
    // Each phase's reads must end within one TTL of its load, or a late
    // reader rightly loads again: long enough for a loaded machine.
    let ttl = Duration::from_secs(4);
    let spec = Spec { name: "prices", ttl, freshness: Freshness::WaitForRebuild, bloom: None };
    let cache: Cache<u64, u64> = Cache::new(spec, &caches, {
        let source = Arc::clone(&source);
        FnLoader(move |_key: u64| {
            let source = Arc::clone(&source);
            async move {
                source.loads.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok::<_, LoadError>(Some(source.value.load(Ordering::SeqCst)))
            }
        })
    });
    let read_all = |n| {
        let cache = cache.clone();
        async move {
            let reads = (0..n).map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { *cache.get(&7).await.unwrap().unwrap() })
            });
            join_all(reads).await.into_iter().map(Result::unwrap).collect::<Vec<u64>>()
        }
    };

    // Cold: 200 concurrent readers, one load, everyone gets the value.
    assert!(read_all(200).await.iter().all(|v| *v == 1));
    assert_eq!(source.loads.load(Ordering::SeqCst), 1);

    // Past the logical TTL the value changed: nobody is served the old one.
    source.value.store(2, Ordering::SeqCst);
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    let values = read_all(200).await;
    assert!(values.iter().all(|v| *v == 2), "a stale value was served: {values:?}");
    assert_eq!(source.loads.load(Ordering::SeqCst), 2, "one load per expiry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_that_never_change_are_served_expired_while_their_source_is_down_and_fresh_once_it_is_back() {
    let mut env = TestEnv::new();
    env.settings.cache.jitter_percent = 0;
    env.settings.cache.wait_ms = Duration::from_millis(500);
    let kv = env.kv().await;
    let caches = Caches::new(&kv, &env.settings.cache);
    let (value, down) = (Arc::new(AtomicU64::new(1)), Arc::new(AtomicBool::new(false)));
    let spec = Spec {
        name: "details",
        ttl: Duration::from_secs(1),
        freshness: Freshness::WaitForRebuildOrStaleWhenDown,
        bloom: None,
    };
    let cache: Cache<u64, u64> = Cache::new(spec, &caches, {
        let (value, down) = (Arc::clone(&value), Arc::clone(&down));
        FnLoader(move |_key: u64| {
            let (value, down) = (Arc::clone(&value), Arc::clone(&down));
            async move {
                if down.load(Ordering::SeqCst) {
                    return Err::<Option<u64>, LoadError>("the database cannot be reached".into());
                }
                Ok(Some(value.load(Ordering::SeqCst)))
            }
        })
    });
    assert_eq!(*cache.get(&3).await.unwrap().unwrap(), 1);

    // The source goes away for longer than the entry's TTL.
    down.store(true, Ordering::SeqCst);
    value.store(2, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for _ in 0..3 {
        assert_eq!(*cache.get(&3).await.expect("served while the source is down").unwrap(), 1);
    }

    // Back: the next read waits for the fresh value, as before.
    down.store(false, Ordering::SeqCst);
    assert_eq!(*cache.get(&3).await.unwrap().unwrap(), 2);
}

/// `get_many` answers each key as `get` would, in order, reading the L1
/// misses from L2 together; only keys L2 lacks reach the source.
#[tokio::test]
async fn get_many_reads_l1_misses_from_l2_and_only_the_rest_from_the_source() {
    let env = TestEnv::new();
    let kv = env.kv().await;
    let loads = Arc::new(AtomicU64::new(0));
    let make = || {
        let caches = Caches::new(&kv, &env.settings.cache);
        let spec = Spec {
            name: "batch_t",
            ttl: Duration::from_secs(60),
            freshness: Freshness::StaleWhileRebuild,
            bloom: None,
        };
        let loads = Arc::clone(&loads);
        Cache::<u64, u64>::new(
            spec,
            &caches,
            FnLoader(move |key: u64| {
                let loads = Arc::clone(&loads);
                async move {
                    loads.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, LoadError>((key < 90).then_some(key * 10))
                }
            }),
        )
    };
    let (first, second) = (make(), make());
    for key in 1..=5 {
        assert_eq!(first.get(&key).await.unwrap().as_deref(), Some(&(key * 10)));
    }
    assert_eq!(loads.load(Ordering::SeqCst), 5);

    // A second instance (its own, empty L1): five from L2, one from the source.
    let l2_hits = || cityhub_testkit::metric("cityhub_cache_hits_total", &[r#"cache="batch_t""#, r#"layer="l2""#]);
    let before = l2_hits();
    let keys = [3, 1, 99, 5, 2, 4];
    let values: Vec<Option<u64>> =
        second.get_many(&keys).await.unwrap().iter().map(|v| v.as_deref().copied()).collect();
    assert_eq!(values, [Some(30), Some(10), None, Some(50), Some(20), Some(40)]);
    assert_eq!(loads.load(Ordering::SeqCst), 6, "only the key L2 lacked was loaded");
    assert_eq!(l2_hits() - before, 5.0);

    // Now all in its L1: no Redis read, no load.
    let again: Vec<Option<u64>> = second.get_many(&keys).await.unwrap().iter().map(|v| v.as_deref().copied()).collect();
    assert_eq!(again, values);
    assert_eq!((loads.load(Ordering::SeqCst), l2_hits() - before), (6, 5.0));
}
