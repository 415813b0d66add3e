//! `docker-compose.yml` cannot be started on machines without a Docker
//! engine, so its structure is checked here against what the binaries accept.

use std::collections::{BTreeSet, HashMap};

use cityhub_core::config::Settings;
use serde_yaml::Value;

fn root(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn compose() -> Value {
    let mut doc: Value = serde_yaml::from_str(&root("docker-compose.yml")).unwrap();
    doc.apply_merge().unwrap();
    doc
}

fn env_of(service: &Value) -> HashMap<String, String> {
    service["environment"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => serde_yaml::to_string(other).unwrap().trim().to_owned(),
            };
            // Resolve `${VAR:-default}` the way compose does with VAR unset.
            let v = match v.split_once(":-") {
                Some((head, tail)) if head.starts_with("${") => tail.trim_end_matches('}').to_owned(),
                _ => v,
            };
            (k.as_str().unwrap().to_owned(), v)
        })
        .collect()
}

fn ports(service: &Value) -> BTreeSet<String> {
    service["ports"]
        .as_sequence()
        .map_or_else(BTreeSet::new, |p| p.iter().map(|x| x.as_str().unwrap().to_owned()).collect())
}

#[test]
fn compose_has_the_whole_stack_with_healthchecks_and_ordered_start() {
    let doc = compose();
    let services = doc["services"].as_mapping().unwrap();
    let names: BTreeSet<&str> = services.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names, BTreeSet::from(["api", "broker", "mysql", "namesrv", "redis", "worker"]));
    let s = &doc["services"];
    assert!(s["mysql"]["image"].as_str().unwrap().starts_with("mysql:8"));
    assert!(s["redis"]["image"].as_str().unwrap().starts_with("redis:7"));
    assert!(s["namesrv"]["image"].as_str().unwrap().starts_with("apache/rocketmq:"));
    assert_eq!(s["broker"]["image"], s["namesrv"]["image"]);
    for name in &names {
        let test = &s[*name]["healthcheck"]["test"];
        assert!(test.as_sequence().is_some_and(|t| !t.is_empty()), "{name} has no healthcheck");
    }
    for (service, deps) in [
        ("broker", &["namesrv"][..]),
        ("worker", &["mysql", "redis", "broker"][..]),
        ("api", &["mysql", "redis", "broker"][..]),
    ] {
        for dep in deps {
            assert_eq!(s[service]["depends_on"][*dep]["condition"], "service_healthy", "{service} -> {dep}");
        }
    }
    assert!(ports(&s["namesrv"]).contains("9876:9876"));
    assert!(ports(&s["broker"]).contains("10911:10911"));
    assert!(ports(&s["mysql"]).contains("3306:3306"));
    assert!(ports(&s["redis"]).contains("6379:6379"));
}

#[test]
fn compose_builds_the_binaries_from_dockerfile_stages() {
    let doc = compose();
    let dockerfile = root("Dockerfile");
    let stages: BTreeSet<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .filter_map(|l| l.split_whitespace().collect::<Vec<_>>().last().copied())
        .collect();
    for (service, binary) in [("api", "cityhub-api"), ("worker", "cityhub-worker")] {
        let target = doc["services"][service]["build"]["target"].as_str().unwrap();
        assert!(stages.contains(target), "{service} builds missing stage {target}");
        let stage = dockerfile.split(&format!(" AS {target}\n")).nth(1).unwrap();
        assert!(stage.contains(&format!("ENTRYPOINT [\"{binary}\"]")), "{service} stage does not run {binary}");
        assert!(
            dockerfile.contains(&format!("-p {binary}")) || dockerfile.contains(&format!("target/release/{binary}"))
        );
    }
}

#[test]
fn compose_environment_is_exactly_what_the_binaries_accept() {
    let doc = compose();
    let s = &doc["services"];
    let mysql = env_of(&s["mysql"]);
    for (service, binary_port) in [("api", Some("8080")), ("worker", None)] {
        let env = env_of(&s[service]);
        assert!(env.keys().all(|k| k.starts_with("CITYHUB__")), "{service}: {env:?}");
        // Every variable must be a setting the binaries know, with a valid value.
        let settings = Settings::from_vars(env.clone()).unwrap_or_else(|e| panic!("{service}: {e}"));
        let db = settings.database.url.expose().to_owned();
        assert_eq!(
            db,
            format!("mysql://root:{}@mysql:3306/{}", mysql["MYSQL_ROOT_PASSWORD"], mysql["MYSQL_DATABASE"]),
            "{service} reaches the mysql service with its credentials"
        );
        assert_eq!(settings.redis.url.expose(), "redis://redis:6379");
        assert_eq!(settings.mq.namesrv_addr, "namesrv:9876");
        if let Some(port) = binary_port {
            assert_eq!(settings.http.addr, format!("0.0.0.0:{port}"));
            assert!(ports(&s[service]).contains(&format!("{port}:{port}")));
        }
    }
    let worker = Settings::from_vars(env_of(&s["worker"])).unwrap();
    let metrics_port = worker.worker.metrics_addr.rsplit(':').next().unwrap().to_owned();
    assert!(worker.worker.metrics_addr.starts_with("0.0.0.0:"));
    let probe = serde_yaml::to_string(&s["worker"]["healthcheck"]["test"]).unwrap();
    assert!(probe.contains(&format!(":{metrics_port}/healthz")), "worker healthcheck probes its metrics port");
    let api = Settings::from_vars(env_of(&s["api"])).unwrap();
    let ops_port = api.http.metrics_addr.rsplit(':').next().unwrap().to_owned();
    assert!(api.http.metrics_addr.starts_with("0.0.0.0:"), "the API's ops listener is reachable for scraping");
    assert!(ports(&s["api"]).contains(&format!("{ops_port}:{ops_port}")));
    let broker = root("docker/broker.conf");
    assert!(broker.contains("namesrvAddr = namesrv:9876") && broker.contains("brokerIP1 = broker"));
}
