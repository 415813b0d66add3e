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

use std::any::Any;
use std::collections::HashMap;

use crate::ClientError;
use cheetah_string::CheetahString;
use rocketmq_model::common::message::message_ext::MessageExt;
use rocketmq_model::common::message::message_queue::MessageQueue;
use rocketmq_model::common::message::MessageTrait;

use crate::base::query_result::QueryResult;
use crate::producer::send_callback::ArcSendCallback;
use crate::producer::send_result::SendResult;
use crate::producer::transaction_send_result::TransactionSendResult;

fn unsupported_mq_admin_operation(operation: &'static str) -> crate::ClientError {
    crate::ClientError::illegal_argument(format!(
        "{operation} is not supported by this ProducerBackend implementation"
    ))
}

#[allow(async_fn_in_trait)]
pub(crate) trait ProducerBackend {
    /// Starts the producer.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn start(&mut self) -> crate::ClientResult<()>;

    /// Shuts down the producer.
    async fn shutdown(&mut self);

    /// Fetches the list of message queues for a given topic.
    ///
    /// # Arguments
    ///
    /// * `topic` - A string slice that holds the name of the topic.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Vec<MessageQueue>>` - A result containing a vector of
    ///   message queues or an error.
    async fn fetch_publish_message_queues(&mut self, topic: &str) -> crate::ClientResult<Vec<MessageQueue>>;

    /// Creates a topic through the producer's admin facade.
    ///
    /// Java's `ProducerBackend` extends `MQAdmin`; Rust keeps these admin operations async because all
    /// broker I/O in this client is async.
    async fn create_topic(
        &mut self,
        _key: &str,
        _new_topic: &str,
        _queue_num: i32,
        _attributes: HashMap<String, String>,
    ) -> crate::ClientResult<()> {
        Err(unsupported_mq_admin_operation("createTopic"))
    }

    /// Creates a topic with an explicit topic system flag.
    async fn create_topic_with_flag(
        &mut self,
        _key: &str,
        _new_topic: &str,
        _queue_num: i32,
        _topic_sys_flag: i32,
        _attributes: HashMap<String, String>,
    ) -> crate::ClientResult<()> {
        Err(unsupported_mq_admin_operation("createTopicWithFlag"))
    }

    /// Searches the offset in a queue by store timestamp.
    async fn search_offset(&mut self, _mq: &MessageQueue, _timestamp: u64) -> crate::ClientResult<i64> {
        Err(unsupported_mq_admin_operation("searchOffset"))
    }

    /// Returns the broker max offset for a queue.
    async fn max_offset(&mut self, _mq: &MessageQueue) -> crate::ClientResult<i64> {
        Err(unsupported_mq_admin_operation("maxOffset"))
    }

    /// Returns the broker min offset for a queue.
    async fn min_offset(&mut self, _mq: &MessageQueue) -> crate::ClientResult<i64> {
        Err(unsupported_mq_admin_operation("minOffset"))
    }

    /// Returns the earliest store time for messages in a queue.
    async fn earliest_msg_store_time(&mut self, _mq: &MessageQueue) -> crate::ClientResult<i64> {
        Err(unsupported_mq_admin_operation("earliestMsgStoreTime"))
    }

    /// Queries messages by key in a time range.
    async fn query_message(
        &mut self,
        _topic: &str,
        _key: &str,
        _max_num: i32,
        _begin: u64,
        _end: u64,
    ) -> crate::ClientResult<QueryResult> {
        Err(unsupported_mq_admin_operation("queryMessage"))
    }

    /// Views a message by message id.
    async fn view_message(&mut self, _topic: &str, _msg_id: &str) -> crate::ClientResult<MessageExt> {
        Err(unsupported_mq_admin_operation("viewMessage"))
    }

    /// Sends a message.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Option<SendResult>>` - A result containing an optional
    ///   send result or an error.
    async fn send<M>(&self, msg: M) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message with a timeout.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing the send result or an
    ///   error.
    async fn send_with_timeout<M>(&self, msg: M, timeout: u64) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message with a callback.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `send_callback` - The callback function to be executed after sending the message.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_with_callback<M, F>(&self, msg: M, send_callback: F) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a message with a callback and a timeout.
    ///
    /// # Type Parameters
    ///
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `send_callback` - The callback function to be executed after sending the message.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_with_callback_timeout<F, M>(&self, msg: M, send_callback: F, timeout: u64) -> crate::ClientResult<()>
    where
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static,
        M: MessageTrait + Send + Sync;

    /// Sends a message without waiting for a response.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_oneway<M>(&self, msg: M) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message to a specific message queue.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing an optional send result
    ///   or an error. Returns `Some(SendResult)` for synchronous sends, or `None` when the result
    ///   is delivered asynchronously via a callback.
    async fn send_to_queue<M>(&self, msg: M, mq: MessageQueue) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message to a specific message queue with a timeout.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Option<SendResult>>` - A result containing the send result
    ///   or an error.
    async fn send_to_queue_with_timeout<M>(
        &self,
        msg: M,
        mq: MessageQueue,
        timeout: u64,
    ) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message to a specific message queue with a callback.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    /// * `send_callback` - The callback function to be executed after sending the message.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_to_queue_with_callback<M, F>(
        &self,
        msg: M,
        mq: MessageQueue,
        send_callback: F,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a message to a specific message queue with a callback and a timeout.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    /// * `send_callback` - The callback function to be executed after sending the message.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_to_queue_with_callback_timeout<M, F>(
        &self,
        msg: M,
        mq: MessageQueue,
        send_callback: F,
        timeout: u64,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a message to a specific message queue without waiting for a response.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_oneway_to_queue<M>(&self, msg: M, mq: MessageQueue) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a message with a selector function to choose the message queue.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Option<SendResult>>` - A result containing the send result
    ///   or an error.
    async fn send_with_selector<M, S, T>(&self, msg: M, selector: S, arg: T) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync,
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync,
        T: Send + Sync;

    /// Sends a message with a selector function to choose the message queue and a timeout.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Option<SendResult>>` - A result containing the send result
    ///   or an error.
    async fn send_with_selector_timeout<M, S, T>(
        &self,
        msg: M,
        selector: S,
        arg: T,
        timeout: u64,
    ) -> crate::ClientResult<Option<SendResult>>
    where
        M: MessageTrait + Send + Sync,
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync,
        T: Send + Sync;

    /// Sends a message with a selector function to choose the message queue and a callback.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    /// * `send_callback` - The callback function to be executed after sending the message.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_with_selector_callback<M, S, T>(
        &self,
        msg: M,
        selector: S,
        arg: T,
        send_callback: Option<ArcSendCallback>,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync,
        T: Send + Sync;

    /// Sends a message with a selector function to choose the message queue, a callback, and a
    /// timeout.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    /// * `send_callback` - The callback function to be executed after sending the message.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_with_selector_callback_timeout<M, S, T>(
        &self,
        msg: M,
        selector: S,
        arg: T,
        send_callback: Option<ArcSendCallback>,
        timeout: u64,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync + 'static,
        T: Send + Sync + 'static;

    /// Sends a message with a selector function to choose the message queue without waiting for a
    /// response.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_oneway_with_selector<M, S, T>(&self, msg: M, selector: S, arg: T) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync + 'static,
        T: Send + Sync + 'static;

    /// Sends a message in a transaction.
    ///
    /// # Arguments
    ///
    /// * `msg` - A reference to the message to be sent.
    /// * `arg` - A string slice that holds the argument for the transaction.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<TransactionSendResult>` - A result containing the
    ///   transaction send result or an error.
    async fn send_message_in_transaction<T, M>(
        &self,
        msg: M,
        arg: Option<T>,
    ) -> crate::ClientResult<TransactionSendResult>
    where
        T: std::any::Any + Sync + Send,
        M: MessageTrait + Send + Sync;

    /// Sends a batch of messages.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing the send result or an
    ///   error.
    async fn send_batch<M>(&self, msgs: Vec<M>) -> crate::ClientResult<SendResult>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a batch of messages with a timeout.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing the send result or an
    ///   error.
    async fn send_batch_with_timeout<M>(&self, msgs: Vec<M>, timeout: u64) -> crate::ClientResult<SendResult>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a batch of messages to a specific message queue.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `mq` - The message queue to which the messages will be sent.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing the send result or an
    ///   error.
    async fn send_batch_to_queue<M>(&self, msgs: Vec<M>, mq: MessageQueue) -> crate::ClientResult<SendResult>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a batch of messages to a specific message queue with a timeout.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `mq` - The message queue to which the messages will be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<SendResult>` - A result containing the send result or an
    ///   error.
    async fn send_batch_to_queue_with_timeout<M>(
        &self,
        msgs: Vec<M>,
        mq: MessageQueue,
        timeout: u64,
    ) -> crate::ClientResult<SendResult>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a batch of messages with a callback.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `f` - The callback function to be executed after sending the messages.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_batch_with_callback<M, F>(&self, msgs: Vec<M>, f: F) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a batch of messages with a callback and a timeout.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `f` - The callback function to be executed after sending the messages.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_batch_with_callback_timeout<M, F>(&self, msgs: Vec<M>, f: F, timeout: u64) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a batch of messages to a specific message queue with a callback.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `mq` - The message queue to which the messages will be sent.
    /// * `f` - The callback function to be executed after sending the messages.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_batch_to_queue_with_callback<M, F>(
        &self,
        msgs: Vec<M>,
        mq: MessageQueue,
        f: F,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a batch of messages to a specific message queue with a callback and a timeout.
    ///
    /// # Arguments
    ///
    /// * `msgs` - A vector of messages to be sent.
    /// * `mq` - The message queue to which the messages will be sent.
    /// * `f` - The callback function to be executed after sending the messages.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn send_batch_to_queue_with_callback_timeout<M, F>(
        &self,
        msgs: Vec<M>,
        mq: MessageQueue,
        f: F,
        timeout: u64,
    ) -> crate::ClientResult<()>
    where
        M: MessageTrait + Send + Sync,
        F: Fn(Option<&SendResult>, Option<&ClientError>) + Send + Sync + 'static;

    /// Sends a request message.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Box<dyn MessageTrait + Send>>` - A result containing the
    ///   response message or an error.
    async fn request<M>(&self, msg: M, timeout: u64) -> crate::ClientResult<Box<dyn MessageTrait + Send>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a request message with a callback.
    ///
    /// # Type Parameters
    ///
    /// * `F` - A function type for the callback.
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `request_callback` - The callback function to be executed after receiving the response.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn request_with_callback<F, M>(&self, msg: M, request_callback: F, timeout: u64) -> crate::ClientResult<()>
    where
        F: Fn(Option<&dyn MessageTrait>, Option<&crate::ClientError>) + Send + Sync + 'static,
        M: MessageTrait + Send + Sync;

    /// Sends a request message with a selector function to choose the message queue.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Box<dyn MessageTrait + Send>>` - A result containing the
    ///   response message or an error.
    async fn request_with_selector<M, S, T>(
        &self,
        msg: M,
        selector: S,
        arg: T,
        timeout: u64,
    ) -> crate::ClientResult<Box<dyn MessageTrait + Send>>
    where
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync + 'static,
        T: Send + Sync + 'static,
        M: MessageTrait + Send + Sync;

    /// Sends a request message with a selector function to choose the message queue and a callback.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `S` - A function type for the selector.
    /// * `T` - A type for the argument passed to the selector.
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `selector` - The selector function to choose the message queue.
    /// * `arg` - The argument passed to the selector function.
    /// * `request_callback` - The callback function to be executed after receiving the response.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn request_with_selector_callback<M, S, T, F>(
        &self,
        msg: M,
        selector: S,
        arg: T,
        request_callback: F,
        timeout: u64,
    ) -> crate::ClientResult<()>
    where
        S: Fn(&[MessageQueue], &M, &T) -> Option<MessageQueue> + Send + Sync + 'static,
        F: Fn(Option<&dyn MessageTrait>, Option<&crate::ClientError>) + Send + Sync + 'static,
        T: Send + Sync + 'static,
        M: MessageTrait + Send + Sync;

    /// Sends a request message to a specific message queue.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<Box<dyn MessageTrait + Send>>` - A result containing the
    ///   response message or an error.
    async fn request_to_queue<M>(
        &self,
        msg: M,
        mq: MessageQueue,
        timeout: u64,
    ) -> crate::ClientResult<Box<dyn MessageTrait + Send>>
    where
        M: MessageTrait + Send + Sync;

    /// Sends a request message to a specific message queue with a callback.
    ///
    /// # Type Parameters
    ///
    /// * `M` - A type that implements `MessageTrait`, `Clone`, `Send`, and `Sync`.
    /// * `F` - A function type for the callback.
    ///
    /// # Arguments
    ///
    /// * `msg` - The message to be sent.
    /// * `mq` - The message queue to which the message will be sent.
    /// * `request_callback` - The callback function to be executed after receiving the response.
    /// * `timeout` - The timeout duration in milliseconds.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<()>` - An empty result indicating success or failure.
    async fn request_to_queue_with_callback<M, F>(
        &self,
        msg: M,
        mq: MessageQueue,
        request_callback: F,
        timeout: u64,
    ) -> crate::ClientResult<()>
    where
        F: Fn(Option<&dyn MessageTrait>, Option<&crate::ClientError>) + Send + Sync + 'static,
        M: MessageTrait + Send + Sync;

    /// Returns a reference to the object as a trait object of type `Any`.
    ///
    /// # Returns
    ///
    /// * `&dyn Any` - A reference to the object as a trait object of type `Any`.
    fn as_any(&self) -> &dyn Any;

    /// Returns a mutable reference to the object as a trait object of type `Any`.
    ///
    /// # Returns
    ///
    /// * `&mut dyn Any` - A mutable reference to the object as a trait object of type `Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Recalls a previously sent message based on its recall handle.
    ///
    /// This method attempts to recall a message that was previously sent and identified
    /// by a recall handle. The message recall feature allows producers to retrieve
    /// or cancel messages that have been sent but not yet consumed.
    ///
    /// # Arguments
    ///
    /// * `topic` - The topic name. Can be `&str`, `String`, or `CheetahString`.
    /// * `recall_handle` - The recall handle identifying the message to recall. Can be `&str`,
    ///   `String`, or `CheetahString`.
    ///
    /// # Returns
    ///
    /// * `crate::ClientResult<String>` - A result containing a string indicating the
    ///   recall result or an error.
    ///
    /// # Errors
    ///
    /// This function will return an error if:
    /// - The producer is not initialized
    /// - The topic does not exist
    /// - The recall handle is invalid
    /// - The broker is unavailable
    /// - The message cannot be recalled (e.g., already consumed)
    ///
    /// # Examples
    ///
    /// ```rust,ignore
    /// // Using &str
    /// producer.recall_message("TopicTest", "handle123").await?;
    ///
    /// // Using String
    /// let topic = String::from("TopicTest");
    /// producer.recall_message(topic, "handle123").await?;
    ///
    /// // Using CheetahString
    /// let topic = CheetahString::from_slice("TopicTest");
    /// producer.recall_message(topic, "handle123").await?;
    /// ```
    async fn recall_message(
        &self,
        topic: impl Into<CheetahString>,
        recall_handle: impl Into<CheetahString>,
    ) -> crate::ClientResult<String>;
}
