//! The one backoff of the project's retry loops: exponential from a first
//! pause to a cap, each pause drawn at random between half and all of its
//! step ("equal jitter"), so that processes failing together do not all try
//! again at the same instant.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Pauses between the tries of one retry loop.
#[derive(Debug, Clone)]
pub struct Backoff {
    first: Duration,
    step: Duration,
    max: Duration,
}

impl Backoff {
    /// Pauses of about `first`, doubling up to `max`.
    pub fn new(first: Duration, max: Duration) -> Self {
        Self { first, step: first, max: max.max(first) }
    }

    /// The next pause: between half and all of the current step, which then
    /// doubles (up to the cap).
    pub fn next_pause(&mut self) -> Duration {
        let step = self.step;
        self.step = (self.step * 2).min(self.max);
        let half = step / 2;
        half + half.mul_f64(rand::random::<f64>())
    }

    /// Starts again from the first pause (after a success).
    pub fn reset(&mut self) {
        self.step = self.first;
    }

    /// Sleeps the next pause; false when `stop` was cancelled first.
    pub async fn wait(&mut self, stop: &CancellationToken) -> bool {
        tokio::select! {
            () = tokio::time::sleep(self.next_pause()) => true,
            () = stop.cancelled() => false,
        }
    }

    /// Sleeps the next pause.
    pub async fn sleep(&mut self) {
        tokio::time::sleep(self.next_pause()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_cap_and_stay_within_half_and_all_of_each_step() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(800));
        let steps = [100, 200, 400, 800, 800, 800];
        for step in steps {
            let pause = backoff.next_pause();
            let step = Duration::from_millis(step);
            assert!(pause >= step / 2 && pause <= step, "{pause:?} outside [{:?}, {step:?}]", step / 2);
        }
        backoff.reset();
        assert!(backoff.next_pause() <= Duration::from_millis(100));
    }

    #[test]
    fn two_backoffs_do_not_pause_in_step() {
        let (mut a, mut b) = (
            Backoff::new(Duration::from_secs(1), Duration::from_secs(60)),
            Backoff::new(Duration::from_secs(1), Duration::from_secs(60)),
        );
        let same = (0..20).filter(|_| a.next_pause() == b.next_pause()).count();
        assert!(same < 20, "every pause was the same: no jitter");
    }
}
