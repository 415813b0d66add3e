//! The API contract: every route is in the OpenAPI document, every
//! documented operation is served, and every route has a budget.

use serde_json::Value;

use crate::app::TestApp;

/// Route registrations that bypass `utoipa_axum::routes!` would be served but
/// not documented: the route modules must not contain any.
#[test]
fn every_route_is_registered_through_the_documented_router() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut offenders = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let src = std::fs::read_to_string(&path).unwrap();
            for (n, line) in src.lines().enumerate() {
                if line.contains(".route(") || line.contains(".nest(") || line.contains(".route_service(") {
                    offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "undocumented route registrations:\n{}", offenders.join("\n"));
}

#[test]
fn the_document_covers_the_known_routes_with_json_errors() {
    let doc = serde_json::to_value(cityhub_api::openapi()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    let mut ops: Vec<String> = paths
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |m| format!("{} {path}", m.to_uppercase())))
        .collect();
    ops.sort();
    assert_eq!(
        ops,
        [
            "DELETE /users/{id}/block",
            "DELETE /users/{id}/follow",
            "GET /admin/",
            "GET /admin/orders",
            "GET /admin/overview",
            "GET /admin/parked",
            "GET /admin/reconcile/{voucher_id}",
            "GET /admin/sales",
            "GET /admin/sales/{voucher_id}",
            "GET /admin/shops/{id}/uv",
            "GET /feed",
            "GET /healthz",
            "GET /notes/hot",
            "GET /notes/{id}",
            "GET /orders",
            "GET /orders/{id}",
            "GET /readyz",
            "GET /serving",
            "GET /shop-types",
            "GET /shops",
            "GET /shops/nearby",
            "GET /shops/{id}",
            "GET /shops/{id}/notes",
            "GET /shops/{id}/vouchers",
            "GET /users/me",
            "GET /users/me/blocks",
            "GET /users/me/friends",
            "GET /users/me/recommendations",
            "GET /users/me/sign",
            "GET /users/me/vouchers",
            "GET /users/{id}/common-follows",
            "GET /users/{id}/counts",
            "GET /users/{id}/followers",
            "GET /users/{id}/following-status",
            "GET /users/{id}/followings",
            "GET /vouchers/{id}",
            "POST /admin/orders/{id}/close",
            "POST /admin/parked/{id}/replay",
            "POST /admin/reconcile/{voucher_id}",
            "POST /admin/shops",
            "POST /admin/vouchers",
            "POST /admin/vouchers/ordinary",
            "POST /auth/code",
            "POST /auth/login",
            "POST /auth/logout",
            "POST /notes",
            "POST /orders/{id}/pay",
            "POST /payments/callback",
            "POST /users/me/sign",
            "POST /vouchers/{id}/claim",
            "POST /vouchers/{id}/seckill",
            "PUT /admin/shops/{id}",
            "PUT /admin/vouchers/{id}",
            "PUT /notes/{id}/like",
            "PUT /users/{id}/block",
            "PUT /users/{id}/follow",
        ]
    );
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(responses.keys().any(|s| s.starts_with('2')), "{method} {path} documents no success");
            for (status, response) in responses {
                // An admin route's answer is a named schema (or a list of
                // one), never a bare object, so scripts read typed figures.
                let schema = &response["content"]["application/json"]["schema"];
                if path.starts_with("/admin/") && status.starts_with('2') && !schema.is_null() {
                    let named = schema["$ref"].is_string() || schema["items"]["$ref"].is_string();
                    assert!(named, "{method} {path} {status} answers an untyped {schema}");
                }
                if status.starts_with('4') || (status.starts_with('5') && path != "/readyz") {
                    let schema = &response["content"]["application/json"]["schema"]["$ref"];
                    assert_eq!(schema, "#/components/schemas/ErrorBody", "{method} {path} {status}");
                }
            }
        }
    }
}

#[tokio::test]
async fn every_documented_operation_is_served_and_the_document_is_published() {
    let app = TestApp::spawn_without_worker().await;
    let served: Value = app.http.get(app.url("/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(served, serde_json::to_value(cityhub_api::openapi()).unwrap());
    let docs = app.http.get(app.url("/docs/")).send().await.unwrap();
    assert_eq!(docs.status(), 200);
    assert!(docs.text().await.unwrap().contains("swagger"));

    for (path, item) in served["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let url = app.url(&path.replace("{id}", "1"));
            let r = app.http.request(method.to_uppercase().parse().unwrap(), &url).send().await.unwrap();
            let status = r.status().as_u16();
            let body: Value = r.json().await.unwrap_or(Value::Null);
            assert!(status != 405 && body["code"] != "route_not_found", "{method} {path} is documented but not served");
        }
    }
    app.shutdown().await;
}

/// Every documented route has a budget (a row of `limits::BUDGETS`, which
/// the limiter reads), every budget is a documented route, and docs/API.md's
/// "Budgets" table gives each route the same budget.
#[test]
fn every_route_has_a_budget_and_a_row_in_the_budget_table() {
    let doc = serde_json::to_value(cityhub_api::openapi()).unwrap();
    let mut documented: Vec<String> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |m| format!("{} {path}", m.to_uppercase())))
        .collect();
    documented.sort();
    let mut budgeted: Vec<String> = cityhub_api::limits::BUDGETS.iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    budgeted.sort();
    assert_eq!(documented, budgeted, "routes without a budget, or budgets without a route");
    let api_md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let table = api_md.split("## Budgets").nth(1).expect("docs/API.md has a Budgets section");
    let mut missing = Vec::new();
    for (method, path, budget) in cityhub_api::limits::BUDGETS {
        let row = format!("| `{method} {path}` | `{}` |", budget.name());
        if !table.lines().any(|l| l.starts_with(&row)) {
            missing.push(row);
        }
    }
    assert!(missing.is_empty(), "rows missing from docs/API.md's Budgets table:\n{}", missing.join("\n"));
}
