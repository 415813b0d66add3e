//! `docker-compose.yml` cannot be started on machines without a Docker
//! engine, so it is checked here: against what the binaries accept, and for
//! the properties of a closed-by-default deployment (docs/OPERATIONS.md, "Security"):
//! only 127.0.0.1 ports and no ops port published, Redis and MariaDB reached
//! with passwords as users of their own (never root, narrow grants), no
//! secret with a default, and migrations MySQL 8 accepts as well as MariaDB.

use std::collections::{BTreeSet, HashMap};

use cityhub_core::config::Settings;
use serde_yaml::Value;

/// The database service.
const DB: &str = "mariadb";

/// The services that run once and exit: no healthcheck, no restart.
const ONE_SHOT: [&str; 2] = ["cli", "demo"];

fn root(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn compose() -> Value {
    let mut doc: Value = serde_yaml::from_str(&root("docker-compose.yml")).unwrap();
    doc.apply_merge().unwrap();
    doc
}

/// The variable a `${NAME:?message}` reference names. Compose refuses to
/// start while such a variable is unset or empty: it has no default.
fn required_var(reference: &str) -> Option<&str> {
    let inner = reference.strip_prefix("${")?.strip_suffix('}')?;
    let (name, _message) = inner.split_once(":?")?;
    let ident = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some(name)
}

/// The value an operator sets for the required variable `name`, for these
/// tests: long enough for every check of the binaries, and safe in a URL.
fn placeholder(name: &str) -> String {
    format!("{}-{}", name.to_lowercase(), "0".repeat(32))
}

/// `value` with its `${...}` references resolved as compose does, with every
/// required variable set (to its [`placeholder`]) and no other.
fn resolve(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = start + rest[start..].find('}').expect("a closed variable reference");
        let reference = &rest[start..=end];
        if let Some(name) = required_var(reference) {
            out.push_str(&placeholder(name));
        } else if let Some((_, default)) = reference[2..reference.len() - 1].split_once(":-") {
            out.push_str(default);
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A service's environment as written in the file (references unresolved).
fn raw_env(service: &Value) -> HashMap<String, String> {
    service["environment"].as_mapping().map_or_else(HashMap::new, |env| {
        env.iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => serde_yaml::to_string(other).unwrap().trim().to_owned(),
                };
                (k.as_str().unwrap().to_owned(), v)
            })
            .collect()
    })
}

/// A service's environment as its container sees it.
fn env_of(service: &Value) -> HashMap<String, String> {
    raw_env(service).into_iter().map(|(k, v)| (k, resolve(&v))).collect()
}

/// The settings a binary loads from a service's environment.
fn settings_of(service: &Value) -> Settings {
    Settings::from_vars(env_of(service)).unwrap()
}

/// A service's published ports, each as written (short syntax only).
fn ports(service: &Value) -> Vec<String> {
    service["ports"].as_sequence().map_or_else(Vec::new, |list| {
        list.iter().map(|p| p.as_str().unwrap_or_else(|| panic!("{p:?}: not a string")).to_owned()).collect()
    })
}

/// `(host, container)` ports of a `127.0.0.1:<host>:<container>` entry;
/// `None` for any other form (all interfaces, another address, a range).
fn loopback_port(entry: &str) -> Option<(u16, u16)> {
    let (host, container) = entry.strip_prefix("127.0.0.1:")?.split_once(':')?;
    Some((host.parse().ok()?, container.parse().ok()?))
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

/// `(user, password)` of a `scheme://user:password@host` URL, as written.
fn credentials(url: &str) -> Option<(&str, &str)> {
    let (_, rest) = url.split_once("://")?;
    let (userinfo, _) = rest.rsplit_once('@')?;
    userinfo.split_once(':')
}

/// Names of variables and settings that hold a secret.
fn is_secret(name: &str) -> bool {
    name.contains("PASSWORD") || name.contains("SECRET") || name.ends_with("_AUTH")
}

/// A command's `--<directive> <args...>` arguments (`redis-server`'s way of
/// taking configuration lines), in order.
fn directives<'a>(command: &[&'a str]) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut out: Vec<(&'a str, Vec<&'a str>)> = Vec::new();
    for &arg in command {
        if let Some(name) = arg.strip_prefix("--") {
            out.push((name, Vec::new()));
        } else if let Some((_, args)) = out.last_mut() {
            args.push(arg);
        }
    }
    out
}

#[test]
fn compose_has_the_whole_stack_with_healthchecks_and_ordered_start() {
    let doc = compose();
    let services = doc["services"].as_mapping().unwrap();
    let names: BTreeSet<&str> = services.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names, BTreeSet::from(["api", "broker", "cli", DB, "demo", "namesrv", "redis", "worker"]));
    let s = &doc["services"];
    // Long-running services restart unless stopped; the one-shot demo and
    // the operator's CLI (started by `compose run` only) never do.
    for name in &names {
        let expected = if ONE_SHOT.contains(name) { "no" } else { "unless-stopped" };
        assert_eq!(s[*name]["restart"].as_str(), Some(expected), "{name}'s restart policy");
    }
    assert_eq!(s["cli"]["profiles"][0], "tools", "`up` does not start the CLI");
    assert_eq!(s["demo"]["depends_on"]["api"]["condition"], "service_healthy", "demo data once the API migrated");
    let demo: Vec<&str> = s["demo"]["command"].as_sequence().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(demo, ["demo", "--once"], "demo data on an empty platform only");
    let names: BTreeSet<&str> = names.into_iter().filter(|n| !ONE_SHOT.contains(n)).collect();
    assert!(s["redis"]["image"].as_str().unwrap().starts_with("redis:7"));
    assert!(s["namesrv"]["image"].as_str().unwrap().starts_with("apache/rocketmq:"));
    assert_eq!(s["broker"]["image"], s["namesrv"]["image"]);
    for name in &names {
        let test = &s[*name]["healthcheck"]["test"];
        assert!(test.as_sequence().is_some_and(|t| !t.is_empty()), "{name} has no healthcheck");
    }
    for (service, deps) in
        [("broker", &["namesrv"][..]), ("worker", &[DB, "redis", "broker"][..]), ("api", &[DB, "redis", "broker"][..])]
    {
        for dep in deps {
            assert_eq!(s[service]["depends_on"][*dep]["condition"], "service_healthy", "{service} -> {dep}");
        }
    }
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
    for (service, binary) in
        [("api", "cityhub-api"), ("worker", "cityhub-order-worker"), ("demo", "cityhub"), ("cli", "cityhub")]
    {
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
    for service in ["api", "worker", "demo", "cli"] {
        let env = env_of(&s[service]);
        assert!(env.keys().all(|k| k.starts_with("CITYHUB__")), "{service}: {env:?}");
        // Every variable must be a setting the binaries know, with a valid value.
        let settings = Settings::from_vars(env).unwrap_or_else(|e| panic!("{service}: {e}"));
        assert_eq!(settings.mq.namesrv_addr, "namesrv:9876");
        let raw = raw_env(&s[service]);
        let secret = required_var(&raw["CITYHUB__PAYMENTS__CALLBACK_SECRET"])
            .expect("the callback secret comes from a required variable");
        assert_eq!(settings.payments.callback_secret.expose(), placeholder(secret));
    }
    let api = settings_of(&s["api"]);
    assert!(!api.auth.log_codes, "login codes are logged only when CITYHUB_LOG_CODES=true is set");
    assert!(api.http.addr.starts_with("0.0.0.0:"), "the API listens beyond its container");
    assert!(api.http.metrics_addr.starts_with("0.0.0.0:"), "the API's ops listener is reachable for scraping");
    let worker = settings_of(&s["worker"]);
    assert!(worker.worker.metrics_addr.starts_with("0.0.0.0:"));
    let probe = serde_yaml::to_string(&s["worker"]["healthcheck"]["test"]).unwrap();
    let metrics_port = port_of(&worker.worker.metrics_addr);
    assert!(probe.contains(&format!(":{metrics_port}/healthz")), "worker healthcheck probes its metrics port");
    let broker = root("docker/broker.conf");
    assert!(broker.contains("namesrvAddr = namesrv:9876") && broker.contains("brokerIP1 = broker"));
}

#[test]
fn compose_publishes_only_loopback_ports_and_no_ops_port() {
    let doc = compose();
    let s = &doc["services"];
    for (name, service) in s.as_mapping().unwrap() {
        for entry in ports(service) {
            assert!(loopback_port(&entry).is_some(), "{name:?} publishes {entry}: only 127.0.0.1:<host>:<container>");
        }
    }
    let api = settings_of(&s["api"]);
    let worker = settings_of(&s["worker"]);
    for (service, ops) in [("api", &api.http.metrics_addr), ("worker", &worker.worker.metrics_addr)] {
        // Every entry ends with its container port (checked above).
        let ops_port = format!(":{}", port_of(ops));
        let published = ports(&s[service]);
        assert!(!published.iter().any(|p| p.ends_with(&ops_port)), "{service} publishes its ops listener {ops}");
    }
    // The API's public port, and nothing else of it, is published.
    assert_eq!(ports(&s["api"]), [format!("127.0.0.1:{0}:{0}", port_of(&api.http.addr))]);
}

#[test]
fn compose_redis_requires_a_password_and_the_platform_logs_in_with_it() {
    let doc = compose();
    let s = &doc["services"];
    let command: Vec<&str> = s["redis"]["command"]
        .as_sequence()
        .expect("redis-server's arguments as a list")
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let users: HashMap<&str, Vec<&str>> = directives(&command)
        .into_iter()
        .filter(|(directive, args)| *directive == "user" && !args.is_empty())
        .map(|(_, args)| (args[0], args[1..].to_vec()))
        .collect();
    assert!(users.get("default").is_some_and(|rules| rules.contains(&"off")), "the default user is off: {command:?}");
    let rules = users.get("cityhub").expect("an ACL user for the platform");
    assert!(rules.contains(&"on") && !rules.contains(&"nopass"), "{rules:?}");
    let password = rules
        .iter()
        .copied()
        .find_map(|r| r.strip_prefix('>'))
        .and_then(required_var)
        .expect("the platform user's password comes from a required variable");
    // Of the @dangerous commands, INFO only (platform/src/kv/generation.rs).
    let allowed_again: Vec<&str> =
        rules.iter().copied().skip_while(|r| *r != "-@dangerous").filter(|r| r.starts_with('+')).collect();
    assert_eq!(allowed_again, ["+info"], "{rules:?}");

    for service in ["api", "worker", "demo", "cli"] {
        let raw = raw_env(&s[service]);
        let url = &raw["CITYHUB__REDIS__URL"];
        let (user, secret) = credentials(url).unwrap_or_else(|| panic!("{service}: no credentials in {url}"));
        assert_eq!((user, required_var(secret)), ("cityhub", Some(password)), "{service}: {url}");
        let settings = settings_of(&s[service]);
        assert_eq!(settings.redis.url.expose(), format!("redis://cityhub:{}@redis:6379", placeholder(password)));
    }
    // The healthcheck logs in too (redis-cli reads REDISCLI_AUTH).
    let probe = serde_yaml::to_string(&s["redis"]["healthcheck"]["test"]).unwrap();
    assert!(probe.contains("--user cityhub"), "{probe}");
    let redis = raw_env(&s["redis"]);
    assert_eq!(required_var(&redis["REDISCLI_AUTH"]), Some(password));
}

#[test]
fn compose_database_user_is_not_root_and_has_only_the_grants_it_needs() {
    let doc = compose();
    let s = &doc["services"];
    let db = raw_env(&s[DB]);
    let (user, database) = (db["MARIADB_USER"].as_str(), db["MARIADB_DATABASE"].as_str());
    assert_ne!(user, "root");
    assert_eq!(db["MARIADB_ROOT_HOST"], "localhost", "root logs in from inside its container only");
    let password = required_var(&db["MARIADB_PASSWORD"]).expect("the user's password comes from a required variable");
    for service in ["api", "worker", "demo", "cli"] {
        let raw = raw_env(&s[service]);
        let url = &raw["CITYHUB__DATABASE__URL"];
        let (url_user, secret) = credentials(url).unwrap_or_else(|| panic!("{service}: no credentials in {url}"));
        assert_eq!((url_user, required_var(secret)), (user, Some(password)), "{service}: {url}");
        let settings = settings_of(&s[service]);
        let expected = format!("mysql://{user}:{}@{DB}:3306/{database}", placeholder(password));
        assert_eq!(settings.database.url.expose(), expected, "{service} reaches the {DB} service");
    }
    // The image gives MARIADB_USER ALL on the database; an init file narrows it.
    let mounts = serde_yaml::to_string(&s[DB]["volumes"]).unwrap();
    assert!(mounts.contains("./docker/mariadb/grants.sql:/docker-entrypoint-initdb.d/"), "{mounts}");
    let grants = root("docker/mariadb/grants.sql");
    let statements = grants.lines().filter(|l| !l.trim_start().starts_with("--"));
    let sql = statements.flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ").to_uppercase();
    let on = format!("ON `{database}`.*").to_uppercase();
    let to = format!("'{user}'@'%'").to_uppercase();
    assert!(sql.contains(&format!("REVOKE ALL PRIVILEGES {on} FROM {to};")), "{sql}");
    let needed = "SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, REFERENCES";
    assert!(sql.contains(&format!("GRANT {needed} {on} TO {to};")), "{sql}");
    assert!(!sql.contains("*.*") && !sql.contains("GRANT ALL") && !sql.contains("GRANT OPTION"), "{sql}");
}

#[test]
fn compose_secrets_have_no_default() {
    let text = root("docker-compose.yml");
    let mut secrets = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("${") {
        let end = start + rest[start..].find('}').expect("a closed variable reference");
        let reference = &rest[start..=end];
        let name = reference[2..].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap();
        if is_secret(name) {
            assert_eq!(required_var(reference), Some(name), "{reference}: a secret has no default");
            secrets.insert(name.to_owned());
        }
        rest = &rest[end + 1..];
    }
    let expected = ["CITYHUB_PAYMENTS_CALLBACK_SECRET", "MARIADB_PASSWORD", "MARIADB_ROOT_PASSWORD", "REDIS_PASSWORD"];
    assert_eq!(secrets, BTreeSet::from(expected.map(String::from)));
    // Every secret setting, and every URL's password, is one of them.
    let doc = compose();
    for (name, service) in doc["services"].as_mapping().unwrap() {
        for (key, value) in raw_env(service) {
            let secret = if is_secret(&key) { Some(value.as_str()) } else { credentials(&value).map(|c| c.1) };
            if let Some(secret) = secret {
                assert!(required_var(secret).is_some(), "{name:?}: {key} = {value} has a default or a literal secret");
            }
        }
    }
}

#[test]
fn compose_database_is_mariadb_and_migrations_also_run_on_mysql() {
    let doc = compose();
    let image = doc["services"][DB]["image"].as_str().unwrap();
    assert!(image.starts_with("mariadb:"), "{image}: the database the suite runs against");
    let dir = format!("{}/../migrations", env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let sql = std::fs::read_to_string(&path).unwrap().to_uppercase();
        let code: Vec<&str> = sql.lines().map(|l| l.split("--").next().unwrap_or_default()).collect();
        let code = code.join("\n");
        let words: Vec<&str> =
            code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
        for (i, word) in words.iter().enumerate() {
            let next = |n: usize| words.get(i + n).copied().unwrap_or_default();
            let refused = match *word {
                // MariaDB's name for a stored generated column; both know STORED.
                "PERSISTENT" => Some("PERSISTENT: write STORED"),
                // MariaDB-only statements and types.
                "SEQUENCE" | "RETURNING" | "INET4" | "INET6" => Some("a MariaDB-only statement or type"),
                "CREATE" if next(1) == "OR" && next(2) == "REPLACE" && next(3) == "TABLE" => {
                    Some("CREATE OR REPLACE TABLE")
                }
                // MySQL 8 has no IF [NOT] EXISTS on columns, keys and constraints.
                "ADD" | "DROP" | "MODIFY" | "CHANGE"
                    if ["COLUMN", "KEY", "INDEX", "CONSTRAINT", "UNIQUE"].contains(&next(1))
                        && (next(2) == "IF" || next(3) == "IF") =>
                {
                    Some("IF [NOT] EXISTS on a column, key or constraint")
                }
                _ => None,
            };
            assert!(refused.is_none(), "{}: {} is MariaDB-only", path.display(), refused.unwrap());
        }
        checked += 1;
    }
    assert!(checked > 0, "no migration found");
}

/// A database that applied `20261203000004` when it still said
/// `PERSISTENT` starts with the rewritten (`STORED`) file instead of
/// refusing it for its changed checksum.
#[tokio::test]
async fn a_database_migrated_with_the_earlier_text_of_a_rewritten_migration_still_starts() {
    let env = cityhub_testkit::TestEnv::new();
    let db = env.db().await;
    let earlier = "25a153f1fa8db676569aa6e1cb900dafc7c3c22e889f9c7bf439b34eb32d8393ae37e8e48770cb977c9a4d94bcb426a0";
    sqlx::query("UPDATE _sqlx_migrations SET checksum = UNHEX(?) WHERE version = 20261203000004")
        .bind(earlier)
        .execute(&db)
        .await
        .unwrap();
    db.close().await;
    let again = env.db().await;
    let now: String =
        sqlx::query_scalar("SELECT LOWER(HEX(checksum)) FROM _sqlx_migrations WHERE version = 20261203000004")
            .fetch_one(&again)
            .await
            .unwrap();
    // SHA-384 of the file as it is now (`sha384sum`).
    let stored = "4a39fcccacacfb12c7da34b1dd6885567c24cbde534c1ef8cb55c953b0781bf19d2a259fcdc88e710ec2e78252e0eccf";
    assert_eq!(now, stored);
}
