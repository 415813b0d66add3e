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

pub mod ack_callback;
pub mod ack_result;
pub mod ack_status;
pub mod allocate_message_queue_strategy;
pub mod consumer_impl;
pub mod default_lite_pull_consumer;
pub mod default_lite_pull_consumer_builder;
pub mod default_mq_pull_consumer;
pub mod default_mq_pull_consumer_builder;
pub mod default_mq_push_consumer;
pub mod default_mq_push_consumer_builder;
pub mod listener;
pub mod lite_pull_consumer;
pub mod message_queue_listener;
pub mod message_queue_lock;
pub mod message_selector;
pub mod mq_consumer;
pub mod mq_consumer_inner;
pub mod mq_push_consumer;
pub mod notify_result;
pub mod pop_callback;
pub mod pop_result;
pub mod pop_retry_policy;
pub mod pop_status;
pub(crate) mod pull_callback;
pub mod pull_result;
pub mod pull_status;
pub mod rebalance_strategy;
pub mod store;
pub mod topic_message_queue_change_listener;

pub use rocketmq_model::common::consistenthash::HashFunction;

pub use ack_callback::AckCallback;
pub use ack_callback::AckCallbackFn;
pub use ack_result::AckResult;
pub use ack_status::AckStatus;
pub use allocate_message_queue_strategy::AbstractAllocateMessageQueueStrategy;
pub use allocate_message_queue_strategy::AllocateMessageQueueStrategy;
pub use default_lite_pull_consumer::DefaultLitePullConsumer;
pub use default_lite_pull_consumer_builder::DefaultLitePullConsumerBuilder;
pub use default_mq_pull_consumer::ClassicPullCallback;
#[allow(deprecated)]
pub use default_mq_pull_consumer::DefaultMQPullConsumer;
#[allow(deprecated)]
pub use default_mq_pull_consumer::MQPullConsumer;
pub use default_mq_pull_consumer::PullOptions;
pub use default_mq_pull_consumer_builder::DefaultMQPullConsumerBuilder;
pub use default_mq_push_consumer::ConsumerTuningProfile;
pub use default_mq_push_consumer::DefaultMQPushConsumer;
pub use default_mq_push_consumer_builder::DefaultMQPushConsumerBuilder;
pub use listener::ConsumeConcurrentlyContext;
pub use listener::ConsumeConcurrentlyStatus;
pub use listener::ConsumeOrderlyContext;
pub use listener::ConsumeOrderlyStatus;
pub use listener::MessageListener;
pub use listener::MessageListenerConcurrently;
pub use listener::MessageListenerOrderly;
pub use lite_pull_consumer::AssignmentControl;
pub use lite_pull_consumer::ConsumerLifecycle;
pub use lite_pull_consumer::ConsumerOffsetControl;
pub use lite_pull_consumer::MessagePoll;
pub use lite_pull_consumer::SubscriptionControl;
pub use message_queue_listener::ArcMessageQueueListener;
pub use message_queue_listener::MessageQueueListener;
pub use message_selector::MessageSelector;
pub use mq_consumer::MQConsumer;
pub use mq_consumer_inner::MQConsumerInner;
pub use mq_push_consumer::MQPushConsumer;
pub use pop_callback::PopCallback;
pub use pop_callback::PopCallbackFn;
pub use pop_result::PopResult;
pub use pop_status::PopStatus;
pub use pull_callback::PullCallback;
pub use pull_callback::PullCallbackFn;
pub use pull_result::PullResult;
pub use pull_status::PullStatus;
pub use rebalance_strategy::allocate_message_queue_averagely::AllocateMessageQueueAveragely;
pub use rebalance_strategy::allocate_message_queue_averagely_by_circle::AllocateMessageQueueAveragelyByCircle;
pub use rebalance_strategy::allocate_message_queue_by_config::AllocateMessageQueueByConfig;
pub use rebalance_strategy::allocate_message_queue_by_machine_room::AllocateMessageQueueByMachineRoom;
pub use rebalance_strategy::allocate_message_queue_by_machine_room_nearby::AllocateMachineRoomNearby;
pub use rebalance_strategy::allocate_message_queue_by_machine_room_nearby::AllocateMessageQueueByMachineRoomNearby;
pub use rebalance_strategy::allocate_message_queue_by_machine_room_nearby::MachineRoomResolver;
pub use rebalance_strategy::allocate_message_queue_consistent_hash::AllocateMessageQueueConsistentHash;
pub use store::ControllableOffset;
pub use store::LocalFileOffsetStore;
pub use store::OffsetSerialize;
pub use store::OffsetSerializeWrapper;
pub use store::OffsetStore;
pub use store::ReadOffsetType;
pub use store::RemoteBrokerOffsetStore;
pub use topic_message_queue_change_listener::TopicMessageQueueChangeListener;
