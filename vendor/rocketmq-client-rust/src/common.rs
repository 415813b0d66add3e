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

pub mod acl;
pub mod acl_client_rpc_hook;
pub mod admin_tool_result;
pub mod admin_tools_result_code_enum;
pub mod client_error_code;
pub mod nameserver_access_config;
pub(crate) mod retry_policy;
pub mod session_credentials;
pub mod thread_local_index;
