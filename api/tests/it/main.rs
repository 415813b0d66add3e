//! Integration tests of the API and the order worker against the real
//! MariaDB, Redis and RocketMQ. One binary; each test has its own database,
//! key prefix and topic (see `cityhub_testkit`).

mod app;

mod auth;
mod buckets;
mod budgets;
mod compose;
mod connections;
mod console;
mod fuzz;
mod guards;
mod ids;
mod lifecycle;
mod metrics;
mod notes;
mod openapi;
mod orders;
mod payments;
mod proxy;
mod reconcile;
mod refunds;
mod seckill;
mod shops;
mod signin;
mod social;
mod vouchers;
