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

mod controllable_offset;
pub mod local_file_offset_store;
mod offset_serialize;
mod offset_serialize_wrapper;
pub mod offset_store;
pub mod read_offset_type;
pub mod remote_broker_offset_store;

pub use controllable_offset::ControllableOffset;
pub use local_file_offset_store::LocalFileOffsetStore;
pub use offset_serialize::OffsetSerialize;
pub use offset_serialize_wrapper::OffsetSerializeWrapper;
pub use offset_store::OffsetStore;
pub use read_offset_type::ReadOffsetType;
pub use remote_broker_offset_store::RemoteBrokerOffsetStore;
