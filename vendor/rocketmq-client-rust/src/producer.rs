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

pub mod capability;
pub mod default_mq_produce_builder;
pub mod default_mq_producer;
pub mod local_transaction_state;
pub mod message_queue_selector;
pub mod produce_accumulator;
pub(crate) mod producer_backend;
pub mod producer_config_validation;
pub mod producer_impl;
pub mod queue_selector;
pub mod request_callback;
pub(crate) mod request_future_holder;
pub(crate) mod request_response_future;
pub mod send_callback;
pub mod send_result;
pub mod send_status;
pub mod transaction_listener;
pub mod transaction_mq_produce_builder;
pub mod transaction_mq_producer;
pub mod transaction_send_result;

pub use capability::BatchSendCallbackRequest;
pub use capability::BatchSendRequest;
pub use capability::MessageQuery;
pub use capability::MessageRecall;
pub use capability::MessageSend;
pub use capability::ProducerLifecycle;
pub use capability::ProducerQueryRequest;
pub use capability::ProducerQueryResponse;
pub use capability::ProducerTopicAdmin;
pub use capability::RecallRequest;
pub use capability::RequestReply;
pub use capability::RequestReplyCallbackRequest;
pub use capability::RequestReplyRequest;
pub use capability::SelectedRequestReplyCallbackRequest;
pub use capability::SelectedRequestReplyRequest;
pub use capability::SelectedSendCallbackRequest;
pub use capability::SelectedSendRequest;
pub use capability::SendCallbackRequest;
pub use capability::SendDestination;
pub use capability::SendMode;
pub use capability::SendRequest;
pub use capability::TopicCreateRequest;
pub use capability::TransactionSend;
pub use capability::TransactionSendRequest;
pub use default_mq_producer::DefaultMQProducer;
pub use default_mq_producer::ProducerConfig;
pub use local_transaction_state::LocalTransactionState;
pub use message_queue_selector::MessageQueueSelector;
pub use message_queue_selector::MessageQueueSelectorFn;
pub use queue_selector::JavaHashCode;
pub use queue_selector::SelectMessageQueueByHash;
pub use queue_selector::SelectMessageQueueByMachineRoom;
pub use queue_selector::SelectMessageQueueByRandom;
pub use request_callback::RequestCallback;
pub use send_callback::SendCallback;
pub use send_result::SendResult;
pub use send_status::SendStatus;
pub use transaction_listener::TransactionListener;
pub use transaction_mq_produce_builder::TransactionMQProducerBuilder;
pub use transaction_mq_producer::TransactionMQProducer;
pub use transaction_send_result::TransactionSendResult;
