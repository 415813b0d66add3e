//! The migrations are embedded by `sqlx::migrate!` (`src/db.rs`); a new
//! file in the folder must rebuild the crate, which the macro alone does
//! not ask for.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
