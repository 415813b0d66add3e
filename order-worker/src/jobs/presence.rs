//! The presence job: announces this worker in the presence list every few
//! seconds (`cityhub_platform::presence`) with the jobs that are down, its
//! order consumer's lag and the orders it stored since it started, so the
//! sale console lists it with its health. It takes its entry away on
//! shutdown; killed, it shows as missing 15 s after its last beat.

use std::sync::Arc;

use cityhub_core::config::Settings;
use cityhub_core::console;
use cityhub_core::kv::Kv;
use cityhub_platform::jobs::{Health, Job, OnExit};
use cityhub_platform::metrics as m;
use cityhub_platform::presence::{self, Identity, Status};
use tokio_util::sync::CancellationToken;

pub struct PresenceJob {
    kv: Kv,
    health: Health,
    me: Identity,
    /// `topic="<order topic>"`, the label of the order consumer's series.
    order_topic: String,
}

impl PresenceJob {
    pub fn new(settings: &Settings, kv: Kv, health: Health) -> Self {
        let order_topic = format!("topic=\"{}\"", settings.mq.order_topic);
        Self { kv, health, me: Identity::of_this_process("worker"), order_topic }
    }

    fn status(&self) -> Status {
        let failing = self.health.down().into_iter().map(|job| format!("job {job}")).collect();
        let text = m::render(&cityhub_platform::metrics::install());
        let topic = self.order_topic.as_str();
        let figures = console::figures(
            &text,
            &[
                (console::FIGURE_ORDER_LAG, m::CONSUMER_LAG, &[topic][..]),
                (console::FIGURE_STORED, m::CONSUMER_MESSAGES, &[topic, "result=\"stored\""][..]),
            ],
        );
        Status { failing, figures }
    }
}

impl Job for PresenceJob {
    const NAME: &'static str = "presence";
    const ON_EXIT: OnExit = OnExit::Restart;

    async fn run(self: Arc<Self>, stop: CancellationToken) -> anyhow::Result<()> {
        let job = Arc::clone(&self);
        presence::run(self.kv.clone(), self.me.clone(), stop, move || {
            let status = job.status();
            async move { status }
        })
        .await;
        Ok(())
    }
}
