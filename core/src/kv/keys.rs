//! Every Redis key CityHub uses, in one place. Each constructor documents the
//! key's type and who writes it. All keys start with the configured prefix;
//! the keys of one seckill voucher share the hash tag `{<voucher id>}` so the
//! scripts that touch them together also run on Redis Cluster.

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

    /// Hash `stock`, `begin_ms`, `end_ms`, `pay_value`: the live seckill state,
    /// preloaded when the voucher is created. Written by `seckill.lua`.
    pub fn seckill_voucher(&self, voucher_id: u64) -> String {
        format!("{}seckill:{{{voucher_id}}}:voucher", self.prefix)
    }

    /// Hash user id -> order id (`<id>` reserved, `<id>:c` confirmed by the worker).
    pub fn seckill_buyers(&self, voucher_id: u64) -> String {
        format!("{}seckill:{{{voucher_id}}}:buyers", self.prefix)
    }

    /// String `<user id>:<voucher id>` with a TTL: an accepted order the
    /// worker has not stored yet, so its owner can see it as `queued`.
    pub fn pending_order(&self, order_id: u64) -> String {
        format!("{}order:{order_id}:pending", self.prefix)
    }

    /// String: the login code sent to a phone, with a TTL.
    pub fn login_code(&self, phone: &str) -> String {
        format!("{}auth:code:{phone}", self.prefix)
    }

    /// String: JSON session behind a bearer token, with a sliding TTL.
    pub fn session(&self, token: &str) -> String {
        format!("{}auth:session:{token}", self.prefix)
    }

    /// Counter used to pick the next order-id node slot to try.
    pub fn id_node_cursor(&self) -> String {
        format!("{}ids:node-cursor", self.prefix)
    }

    /// String: the lease on order-id node slot `node`, held by one process.
    pub fn id_node_lease(&self, node: u16) -> String {
        format!("{}ids:node:{node}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_one_voucher_share_a_hash_tag() {
        let k = Keys::new("t:");
        assert_eq!(k.seckill_voucher(42), "t:seckill:{42}:voucher");
        assert_eq!(k.seckill_buyers(42), "t:seckill:{42}:buyers");
    }
}
