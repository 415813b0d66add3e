//! Integration tests of the worker's jobs against the real MariaDB, Redis and
//! RocketMQ. Orders are made by the real seckill rules (no HTTP); each test
//! has its own database, key prefix and topic (see `cityhub_testkit`).

mod harness;

mod lifecycle;
mod orders;
mod outage;
mod social;
