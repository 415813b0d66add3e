//! The reconciler's repair step: carries out a [`Diff`]'s repairs (or, in a
//! dry run, says what it would do) and turns its findings into the report's
//! differences. The one repair that waits is the rebuild of a paused
//! voucher: it happens only once every order message published before the
//! pause was applied (see the module doc of `reconcile`).

use std::time::{Duration, Instant};

use cityhub_platform::kv::generation::CONFIRMED_WITHIN;
use cityhub_platform::mq::progress::Mark;

use super::diff::{Diff, Finding, Repair};
use super::snapshot::Snapshot;
use super::{Difference, Kind, Mode, ReconcileError, Reconciler, Report, Verdict};
use crate::ids::{OrderId, Sale, UserId};
use crate::kv::CityKeys;
use crate::seckill::scripts::{self, BuyerEntry};
use crate::seckill::OrderMessage;
use crate::vouchers::buckets;

/// A pause this reconciler saw: since when, and the order topic's max
/// offsets once no answer of a reservation made before it could still come.
pub(super) struct Pause {
    seen: Instant,
    mark: Option<Mark>,
}

/// What one pass's re-publishing did.
#[derive(Debug, Default)]
struct Paced {
    sent: usize,
    /// Re-published lately: left alone.
    paced: usize,
    /// Past the pass's most: left for the next pass.
    deferred: usize,
    failed: usize,
}

/// Where the reconciler stands on a paused voucher.
enum Wait {
    /// Reservations made before the pause may still be answered 202.
    Answers(Duration),
    /// Messages published before the pause not stored yet.
    Behind(i64),
    /// The brokers could not say.
    Unknown(String),
}

impl Reconciler {
    /// Repairs (or, in a dry run, describes) every finding of `diff` into
    /// `report`, then recounts Redis stock if the snapshot asked for it.
    pub(super) async fn repair(
        &self,
        s: &Snapshot,
        diff: Diff,
        mode: Mode,
        report: &mut Report,
    ) -> Result<(), ReconcileError> {
        let changes_stock = diff.findings.iter().any(|f| matches!(f.repair, Repair::GiveBack(_) | Repair::Restore(_)));
        for finding in diff.findings {
            let difference = match mode {
                Mode::DryRun => dry(finding),
                Mode::Repair => self.apply(s, finding, report).await?,
            };
            report.differences.push(difference);
        }
        if diff.recount || changes_stock {
            match mode {
                Mode::DryRun if diff.recount => report.differences.push(Difference {
                    kind: Kind::RedisStock,
                    order_ids: Vec::new(),
                    detail: "Redis stock did not match its buyers in this reading; would recount".into(),
                    repaired: false,
                }),
                Mode::DryRun => {}
                Mode::Repair => self.recount(s, report).await?,
            }
        }
        Ok(())
    }

    async fn apply(&self, s: &Snapshot, f: Finding, report: &mut Report) -> Result<Difference, ReconcileError> {
        let Finding { kind, order_ids, detail, repair } = f;
        let (repaired, done) = match repair {
            Repair::Report => (false, String::new()),
            Repair::Republish(pairs) => {
                let paced = self.republish(s, &pairs).await?;
                let done = format!(
                    "; {} of {} order messages re-published, {} sent lately and left alone, {} left for the next pass",
                    paced.sent,
                    pairs.len(),
                    paced.paced,
                    paced.deferred
                );
                (paced.sent + paced.paced == pairs.len(), done)
            }
            Repair::GiveBack(releases) => {
                for r in &releases {
                    let event = format!("reconcile:{}", r.order_id);
                    scripts::give_back(&self.kv, &event, r.sale(), r.user_id, r.order_id).await?;
                }
                (true, "; given back".to_owned())
            }
            Repair::Restore(pairs) => {
                let restored = scripts::restore(&self.kv, s.sale(), &pairs).await?;
                let whole = restored.written as usize == pairs.len() && restored.short == 0;
                (whole, format!("; {} written back ({} with no unit left in Redis)", restored.written, restored.short))
            }
            Repair::Rebuild => return self.rebuild(s, kind, detail, report).await,
        };
        Ok(Difference { kind, order_ids, detail: format!("{detail}{done}"), repaired })
    }

    /// Publishes the orders again, paced: an order re-published within
    /// `reconcile.republish_quiet_secs` is left alone (its copy may still be
    /// on its way to MySQL: after a long outage the worker drains a
    /// backlog), and at most `reconcile.republish_max` go out per pass. Each
    /// send first claims the order's mark (`SET NX PX`, one pipeline for the
    /// pass), so two reconcilers racing send it once.
    async fn republish(&self, s: &Snapshot, pairs: &[(UserId, OrderId)]) -> Result<Paced, ReconcileError> {
        let mark = |order_id| self.kv.keys.seckill_republished(s.sale(), order_id);
        let mut seen = redis::pipe();
        for &(_, order_id) in pairs {
            seen.exists(mark(order_id));
        }
        let recent: Vec<bool> =
            if pairs.is_empty() { Vec::new() } else { seen.query_async(&mut self.kv.conn()).await? };
        let due: Vec<(UserId, OrderId)> = pairs.iter().zip(&recent).filter(|(_, r)| !**r).map(|(p, _)| *p).collect();
        let (now, later) = due.split_at(due.len().min(self.republish_max));
        let mut paced = Paced { paced: pairs.len() - due.len(), deferred: later.len(), ..Paced::default() };
        let mut claim = redis::pipe();
        for &(_, order_id) in now {
            let quiet = redis::SetExpiry::PX(self.republish_quiet.as_millis() as u64);
            let options =
                redis::SetOptions::default().conditional_set(redis::ExistenceCheck::NX).with_expiration(quiet);
            claim.set_options(mark(order_id), 1, options);
        }
        let claimed: Vec<Option<String>> =
            if now.is_empty() { Vec::new() } else { claim.query_async(&mut self.kv.conn()).await? };
        for (&(user_id, order_id), claimed) in now.iter().zip(claimed) {
            if claimed.is_none() {
                paced.paced += 1;
                continue;
            }
            let message = OrderMessage {
                order_id,
                user_id,
                voucher_id: s.voucher_id,
                bucket: s.bucket,
                pay_amount: s.voucher.pay_value,
                created_at_ms: order_id.issued_at_ms(),
                request_id: None,
            };
            match self.orders.publish(order_id.to_string(), serde_json::to_vec(&message)?).await {
                Ok(()) => paced.sent += 1,
                Err(err) => {
                    paced.failed += 1;
                    // Not sent: the next pass may try again at once.
                    let _: redis::RedisResult<()> =
                        redis::AsyncCommands::del(&mut self.kv.conn(), mark(order_id)).await;
                    tracing::warn!(%order_id, error = %err, "cannot re-publish an order; the next run tries again")
                }
            }
        }
        for (result, n) in
            [("sent", paced.sent), ("paced", paced.paced), ("deferred", paced.deferred), ("failed", paced.failed)]
        {
            metrics::counter!(crate::metrics::RECONCILER_REPUBLISHED, "result" => result).increment(n as u64);
        }
        Ok(paced)
    }

    /// Recounts Redis stock from its buyers, atomically; a difference only
    /// if the count changed it.
    async fn recount(&self, s: &Snapshot, report: &mut Report) -> Result<(), ReconcileError> {
        let recount = scripts::recount(&self.kv, s.sale(), s.initial()).await?;
        if let Some((before, after)) = recount.filter(|(b, a)| b != a) {
            report.differences.push(Difference {
                kind: Kind::RedisStock,
                order_ids: Vec::new(),
                detail: format!("Redis stock {before} did not match its buyers; recounted to {after}"),
                repaired: true,
            });
        }
        Ok(())
    }

    /// Whether every order message published before this bucket's pause
    /// has been applied; `None` when it has.
    async fn in_flight(&self, sale: Sale) -> Option<Wait> {
        let (seen, mark) = {
            let mut pauses = self.pauses.lock().expect("pauses lock");
            let pause = pauses.entry(sale).or_insert_with(|| Pause { seen: Instant::now(), mark: None });
            (pause.seen, pause.mark.clone())
        };
        let waited = seen.elapsed();
        if waited < CONFIRMED_WITHIN {
            return Some(Wait::Answers(CONFIRMED_WITHIN - waited));
        }
        let mark = match mark {
            Some(mark) => mark,
            None => match self.progress.mark().await {
                Ok(Some(mark)) => {
                    if let Some(pause) = self.pauses.lock().expect("pauses lock").get_mut(&sale) {
                        pause.mark = Some(mark.clone());
                    }
                    mark
                }
                Ok(None) => return Some(Wait::Unknown("the brokers report no queue of the order topic".into())),
                Err(err) => return Some(Wait::Unknown(err.to_string())),
            },
        };
        match self.progress.behind(&mark).await {
            Ok(0) => None,
            Ok(behind) => Some(Wait::Behind(behind)),
            Err(err) => Some(Wait::Unknown(err.to_string())),
        }
    }

    /// Rebuilds a paused bucket from MySQL once nothing published before
    /// the pause is in flight; otherwise reports the pause. MySQL is read
    /// again only after that answer, so every such order is in it. The
    /// bucket gets its live orders as confirmed buyers, its share less those
    /// as stock, and the "passed" mark of every buyer whose live order, or
    /// live reservation in another bucket's Redis copy (a reservation whose
    /// message is not stored yet), is further along their walk: so it cannot
    /// sell them a second unit. While this bucket is paused no walk gets
    /// past it, so no new such reservation appears meanwhile.
    async fn rebuild(
        &self,
        s: &Snapshot,
        kind: Kind,
        what: String,
        report: &mut Report,
    ) -> Result<Difference, ReconcileError> {
        if let Some(wait) = self.in_flight(s.sale()).await {
            let why = match wait {
                Wait::Answers(left) => format!("earlier reservations may be answered for {left:?} more"),
                Wait::Behind(n) => format!("{n} order messages published before the pause are not stored yet"),
                Wait::Unknown(why) => format!("the order group's progress is unknown: {why}"),
            };
            report.verdict = Verdict::Paused;
            let detail = format!("{what}; not rebuilt yet: {why}");
            return Ok(Difference { kind, order_ids: Vec::new(), detail, repaired: false });
        }
        let orders = super::snapshot::orders(&mut *self.db.acquire().await?, s.voucher_id).await?;
        let live = orders.iter().filter(|(_, o)| o.status.is_live());
        let mut buyers: Vec<(UserId, OrderId)> =
            live.clone().filter(|(_, o)| o.bucket == s.bucket).map(|(id, o)| (o.user_id, *id)).collect();
        buyers.sort();
        let n = s.voucher.buckets;
        let mut passed: Vec<UserId> =
            live.filter(|(_, o)| buckets::passed(o.user_id, n, o.bucket, s.bucket)).map(|(_, o)| o.user_id).collect();
        for other in buckets::sales(s.voucher_id, n).filter(|sale| sale.bucket != s.bucket) {
            let held = super::snapshot::buyers(&self.kv, other).await?;
            let further = |(user, entry): &(UserId, BuyerEntry)| {
                entry.live_order().is_some() && buckets::passed(*user, n, other.bucket, s.bucket)
            };
            passed.extend(held.into_iter().filter(further).map(|(user, _)| user));
        }
        passed.sort();
        passed.dedup();
        let state = scripts::SaleState {
            stock: s.initial() - buyers.len() as i64,
            begin_ms: s.voucher.begin_ms,
            end_ms: s.voucher.end_ms,
            pay_value: s.voucher.pay_value,
            buyers,
            passed,
        };
        let rebuilt = scripts::rebuild(&self.kv, s.sale(), &state).await?;
        self.pauses.lock().expect("pauses lock").remove(&s.sale());
        let stock = state.stock;
        report.redis_stock = Some(stock);
        report.live_orders = state.buyers.len() as i64;
        report.live_buyers = state.buyers.len() as i64;
        let detail = if rebuilt {
            tracing::warn!(
                voucher_id = %s.voucher_id,
                bucket = s.bucket,
                stock,
                buyers = state.buyers.len(),
                "voucher keys rebuilt from MySQL"
            );
            format!("{what}; rebuilt from MySQL with stock {stock}")
        } else {
            format!("{what}; another run rebuilt them first")
        };
        Ok(Difference { kind, order_ids: Vec::new(), detail, repaired: true })
    }
}

/// A finding as a dry run reports it: nothing repaired, the repair named.
fn dry(f: Finding) -> Difference {
    let would = match &f.repair {
        Repair::Report => "",
        Repair::Republish(_) => "; would re-publish the order messages",
        Repair::GiveBack(_) => "; would give the units back",
        Repair::Restore(_) => "; would write the entries back",
        Repair::Rebuild => "; would rebuild from MySQL once nothing published before the pause is in flight",
    };
    Difference { kind: f.kind, order_ids: f.order_ids, detail: format!("{}{would}", f.detail), repaired: false }
}
