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

pub mod async_trace_dispatcher;
pub mod hook;
pub mod trace_bean;
pub mod trace_constants;
pub mod trace_context;
pub mod trace_data_encoder;
pub mod trace_dispatcher;
pub mod trace_dispatcher_type;
pub mod trace_transfer_bean;
pub mod trace_type;
pub mod trace_view;
