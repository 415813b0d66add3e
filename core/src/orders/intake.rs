//! The order intake's rules: what becomes of each consumed order message,
//! decided from what was read about it (the message, its reservation's
//! state in Redis, what MySQL answered), with no I/O here. The order
//! worker's job reads, asks these functions, and turns their verdicts into
//! writes, acks, metrics and logs.
//!
//! The rules, in the order they apply:
//!
//! 1. A message that does not parse is parked ([`Refusal::Unparsable`]).
//! 2. [`triage`]: a revoked reservation (the shopper was told 503) or a
//!    superseded one (the buyer holds another order) is parked, unless the
//!    order is stored already (a late redelivery): then it is only counted.
//!    Confirmed orders, orders Redis has no entry for (Redis lost it) and
//!    orders of a paused voucher (Redis's copy is not trusted) are stored,
//!    where MySQL's stock guard and unique keys decide.
//! 3. [`after_store`]: after a batch commits, an order whose id is stored for
//!    someone else is parked as a conflict; an order stored by this batch
//!    that Redis had no entry for gets its entry written back, taking its
//!    unit (a paused voucher's rebuild counts its orders instead). A
//!    redelivery of an order stored before writes nothing back: the order
//!    may have been closed and its unit released since, and a live order
//!    without its entry is the reconciler's to restore.
//! 4. If a rule refuses the whole batch, each order is stored alone and only
//!    the refused ones are parked ([`refused`]).
//! 5. [`after_batch_failure`], [`after_message_failure`]: any other failure is tried again **in place**, never
//!    handed back to the broker (a message handed back leaves the order
//!    topic, out of sight of the "nothing in flight" signal the reconciler's
//!    rebuild waits for). While Redis or MySQL cannot be reached the whole
//!    batch waits; after an error of another kind its messages are tried one
//!    by one, and one that keeps failing for the give-up time is parked as
//!    [`Refusal::GaveUp`].

use std::time::Duration;

use super::store::{StoreError, Stored};
use super::Refusal;
use crate::seckill::scripts::Confirm;
use crate::seckill::OrderMessage;

/// What to do with a parsed message once its reservation's state is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triage {
    /// Store it; MySQL's guards decide.
    Store,
    /// Park it with `refusal`, unless the order is stored already for its
    /// own user and voucher (then it is a redelivery, counted and acked).
    ParkUnlessStored { refusal: Refusal, detail: &'static str },
}

/// Rule 2 of the module doc.
pub fn triage(state: Confirm) -> Triage {
    match state {
        Confirm::Confirmed | Confirm::Unknown | Confirm::Paused => Triage::Store,
        Confirm::Revoked => Triage::ParkUnlessStored {
            refusal: Refusal::Revoked,
            detail: "the reservation was revoked before the order was stored",
        },
        Confirm::Superseded => Triage::ParkUnlessStored {
            refusal: Refusal::Superseded,
            detail: "the buyer holds another order of this voucher",
        },
    }
}

/// What becomes of one order of a committed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterStore {
    /// Stored now or before; nothing more to do.
    Done,
    /// Its id is stored for another user or voucher: park it.
    Conflict,
    /// Stored, and Redis had no entry for it: write the entry back.
    WriteBack,
}

/// Rule 3 of the module doc, for `order` whose reservation read `state`.
pub fn after_store(order: &OrderMessage, state: Confirm, stored: &Stored) -> AfterStore {
    if stored.conflicts.contains(&(order.order_id, order.user_id, order.voucher_id)) {
        AfterStore::Conflict
    } else if state == Confirm::Unknown && stored.inserted.contains(&order.order_id) {
        AfterStore::WriteBack
    } else {
        AfterStore::Done
    }
}

/// Rule 4: the refusal a single order's store came back with, as parked.
pub fn refused(err: &StoreError) -> Refusal {
    Refusal::from(err)
}

/// What a failed try leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Wait, then try the whole batch again (Redis or MySQL unreachable).
    Batch,
    /// Try each message alone, so one bad message holds up no other.
    OneByOne,
    /// Wait, then try this message again.
    Message,
    /// Park this message as [`Refusal::GaveUp`].
    GiveUp,
}

/// Rule 5, for a whole batch: wait and try it again while Redis or MySQL
/// is unreachable, else try its messages one by one.
pub fn after_batch_failure(outage: bool) -> Retry {
    if outage {
        Retry::Batch
    } else {
        Retry::OneByOne
    }
}

/// Rule 5, for one message that has been failing for `failing_for`: an
/// outage is waited out however long it lasts; an error gives up after
/// `give_up_after`.
pub fn after_message_failure(outage: bool, failing_for: Duration, give_up_after: Duration) -> Retry {
    if !outage && failing_for >= give_up_after {
        Retry::GiveUp
    } else {
        Retry::Message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{OrderId, UserId, VoucherId};

    fn order(order: u64, user: u64) -> OrderMessage {
        OrderMessage {
            order_id: OrderId(order),
            user_id: UserId(user),
            voucher_id: VoucherId(7),
            bucket: 0,
            pay_amount: 100,
            created_at_ms: 0,
            request_id: None,
        }
    }

    #[test]
    fn only_released_and_superseded_reservations_are_kept_out_of_mysql() {
        for state in [Confirm::Confirmed, Confirm::Unknown, Confirm::Paused] {
            assert_eq!(triage(state), Triage::Store, "{state:?}");
        }
        let parked = |state| match triage(state) {
            Triage::ParkUnlessStored { refusal, .. } => Some(refusal),
            Triage::Store => None,
        };
        assert_eq!(parked(Confirm::Revoked), Some(Refusal::Revoked));
        assert_eq!(parked(Confirm::Superseded), Some(Refusal::Superseded));
        // A revoked order's shopper was told 503: parking it breaks no promise.
        assert!(!Refusal::Revoked.had_202());
        assert!(Refusal::Superseded.had_202());
    }

    #[test]
    fn a_stored_order_redis_had_no_entry_for_is_written_back_and_a_conflict_is_parked() {
        let mut stored = Stored::default();
        stored.inserted.insert(OrderId(1));
        stored.conflicts.insert((OrderId(2), UserId(20), VoucherId(7)));
        assert_eq!(after_store(&order(1, 10), Confirm::Unknown, &stored), AfterStore::WriteBack);
        assert_eq!(after_store(&order(1, 10), Confirm::Confirmed, &stored), AfterStore::Done);
        // A paused voucher's rebuild counts its orders: nothing is written back.
        assert_eq!(after_store(&order(1, 10), Confirm::Paused, &stored), AfterStore::Done);
        assert_eq!(after_store(&order(2, 20), Confirm::Unknown, &stored), AfterStore::Conflict);
        // The same id for the same buyer is not the conflict another buyer's is.
        assert_eq!(after_store(&order(2, 21), Confirm::Confirmed, &stored), AfterStore::Done);
        // A redelivery of an order stored before (closed since, perhaps) writes nothing back.
        assert_eq!(after_store(&order(3, 30), Confirm::Unknown, &stored), AfterStore::Done);
    }

    #[test]
    fn a_rule_refusal_parks_with_its_own_kind_and_a_db_error_never_counts_as_a_rule() {
        assert_eq!(refused(&StoreError::StockExhausted(VoucherId(7))), Refusal::StockExhausted);
        assert_eq!(refused(&StoreError::DuplicateBuyer), Refusal::DuplicateBuyer);
        assert_eq!(refused(&StoreError::UnknownVoucher(VoucherId(7))), Refusal::UnknownVoucher);
    }

    #[test]
    fn an_outage_holds_the_batch_and_never_gives_up_while_an_error_goes_one_by_one_then_gives_up() {
        let (give_up, long, short) = (Duration::from_secs(60), Duration::from_secs(61), Duration::from_secs(1));
        assert_eq!(after_batch_failure(true), Retry::Batch);
        assert_eq!(after_batch_failure(false), Retry::OneByOne);
        assert_eq!(after_message_failure(false, short, give_up), Retry::Message);
        assert_eq!(after_message_failure(false, long, give_up), Retry::GiveUp);
        // However long Redis or MySQL stays away, an accepted order is not parked.
        assert_eq!(after_message_failure(true, Duration::from_secs(86_400), give_up), Retry::Message);
    }
}
