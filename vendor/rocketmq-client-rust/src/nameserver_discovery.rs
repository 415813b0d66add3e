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

mod config;
#[cfg(feature = "nameserver-dns-discovery")]
pub(crate) mod dns;
mod snapshot;
pub(crate) mod supervisor;

pub use config::DnsName;
pub use config::NameServerAuthority;
pub use config::NameServerDiscoveryConfig;
pub use config::NameServerSource;
#[cfg(feature = "nameserver-dns-discovery")]
pub(crate) use snapshot::EndpointSnapshot;
#[cfg(feature = "nameserver-dns-discovery")]
pub(crate) use snapshot::Freshness;
pub use snapshot::NameServerDiscoveryErrorCategory;
pub use snapshot::NameServerDiscoveryFreshness;
pub use snapshot::NameServerDiscoverySourceKind;
pub use snapshot::NameServerDiscoveryStatus;
pub use snapshot::ResolvedNameServerEndpoint;
