//! Key names under one configurable prefix (tests use a random one). The
//! plumbing's own keys are here; the business keys are built on [`Keys::key`]
//! in one module of `cityhub-core` (`keys`), each a documented constructor.

/// Builds key names under one prefix.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Self {
        Self { prefix: prefix.to_owned() }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `<prefix><rest>`.
    pub fn key(&self, rest: std::fmt::Arguments<'_>) -> String {
        format!("{}{rest}", self.prefix)
    }

    /// Counter used to pick the next order-id node slot to try.
    pub fn id_node_cursor(&self) -> String {
        self.key(format_args!("ids:node-cursor"))
    }

    /// Sorted set: order-id node slot -> Unix ms of its holder's last
    /// confirmed renewal (`crate::ids::beats`).
    pub fn id_node_beats(&self) -> String {
        self.key(format_args!("ids:beats"))
    }

    /// String: the lease on order-id node slot `node`: its holder's token, or
    /// `free:<generation>` once given up cleanly (see `ids`).
    pub fn id_node_lease(&self, node: u16) -> String {
        self.key(format_args!("ids:node:{node}"))
    }

    /// String: one cache entry in L2, a JSON envelope with its logical
    /// expiry (see `cache`).
    pub fn cache_entry(&self, cache: &str, key: &str) -> String {
        self.key(format_args!("cache:{cache}:{key}"))
    }

    /// String with a TTL: the lock of whoever rebuilds one cache entry.
    pub fn cache_lock(&self, cache: &str, key: &str) -> String {
        self.key(format_args!("cache:{cache}:{key}:lock"))
    }

    /// Pub/sub channel: "drop this L1 entry" messages to every instance.
    pub fn cache_invalidations(&self) -> String {
        self.key(format_args!("cache:invalidations"))
    }

    /// Sorted set (sliding window) or hash (token bucket) with a TTL: the
    /// requests of one subject (`user`, `ip`, ...: `value`) against one
    /// route's limit. The route is the hash tag, so one request's keys are
    /// counted together in one script on Redis Cluster too.
    pub fn rate_limit(&self, route: &str, subject: &str, value: &str) -> String {
        self.key(format_args!("limit:{{{route}}}:{subject}:{value}"))
    }

    /// Bitmap: the Bloom filter `name`; bit 0 is set once it holds every item.
    pub fn bloom(&self, name: &str) -> String {
        self.key(format_args!("bloom:{name}"))
    }
}
