//! Integration tests of the API and the order worker against the real
//! MariaDB, Redis and RocketMQ. One binary; each test has its own database,
//! key prefix and topic (see `cityhub_core::testkit`).

mod app;

mod auth;
mod compose;
mod consumer;
mod fuzz;
mod metrics;
mod openapi;
mod orders;
mod seckill;
mod vouchers;
mod worker;
