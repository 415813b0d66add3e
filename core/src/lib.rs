//! CityHub's business rules, one folder per domain, built on the plumbing in
//! `cityhub-platform` (which never depends on this crate).
//!
//! - [`config`]: the whole configuration, defaults written once.
//! - [`ids`]: the typed ids ([`UserId`], [`VoucherId`], [`OrderId`],
//!   [`ShopId`], [`ClaimId`], [`NoteId`]).
//! - [`kv`], [`keys`]: the Redis handle with every business script loaded,
//!   and every business key.
//! - [`auth`]: phone-code login, lockouts, sessions, roles.
//! - [`vouchers`]: seckill vouchers and ordinary coupons, their rules,
//!   cached details and claims.
//! - [`seckill`]: one request's decision, its [`Outcome`](seckill::Outcome)
//!   vocabulary and its Lua scripts.
//! - [`orders`]: the order message, status, read model, idempotent writer
//!   and lifecycle (pay, close, refund, stock release).
//! - [`payments`]: starting a payment, the simulated provider, its signed
//!   callback, admin close.
//! - [`reconcile`]: compares a voucher's Redis state with MySQL and repairs drift.
//! - [`shops`]: shops read through the two-level cache, nearby search on
//!   GEO indexes, admin writes, unique visitors.
//! - [`social`]: follows, blocks, the follow consumer's projection, lists,
//!   friends, recommendations and count correction.
//! - [`notes`]: notes about shops, their likes, the hot list and the
//!   follow feed (push to inboxes, pull for big authors).
//! - [`signin`]: daily sign-in on a per-user, per-month BITMAP.
//! - [`console`]: the operator's figures (sales from both sides, the
//!   instances and their health, backlogs, order lookup).
//! - [`metrics`]: the names of the business metrics.
//! - [`services`]: the composition root: every service built once from the
//!   settings, and the one place that knows every domain's scripts.
#![forbid(unsafe_code)]

pub mod auth;
pub mod config;
pub mod console;
pub mod ids;
pub mod keys;
pub mod kv;
pub mod metrics;
pub mod notes;
pub mod orders;
pub mod payments;
pub mod reconcile;
pub mod seckill;
pub mod services;
pub mod shops;
pub mod signin;
pub mod social;
pub mod vouchers;

pub use ids::{ClaimId, NoteId, OrderId, Sale, ShopId, UserId, VoucherId};
pub use services::{connect_redis, Services};

#[cfg(test)]
mod layers;
