// Copyright 2023 The RocketMQ Rust Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

pub mod consume_concurrently_context;
pub mod consume_concurrently_status;
pub mod consume_orderly_context;
pub mod consume_orderly_status;
pub mod consume_return_type;
pub mod message_listener;
pub mod message_listener_concurrently;
pub mod message_listener_orderly;

// Re-export commonly used types for convenience
pub use consume_concurrently_context::ConsumeConcurrentlyContext;
pub use consume_concurrently_status::ConsumeConcurrentlyStatus;
pub use consume_orderly_context::ConsumeOrderlyContext;
pub use consume_orderly_status::ConsumeOrderlyStatus;
pub use message_listener::MessageListener;
pub use message_listener_concurrently::MessageListenerConcurrently;
pub use message_listener_orderly::MessageListenerOrderly;
