//! The runtime cost bound, per class of expensive expression: each case just under
//! and just over [`MAX_COST`]. Where the case says so, its verdict is the real
//! scheduler's (kube-scheduler v1.35.4 run on the selector through the oracle).

use std::collections::BTreeMap;

use k8s_openapi::api::resource::v1::DeviceAttribute;

use super::*;

fn eval(expr: &str) -> Result<bool, String> {
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "model".to_string(),
        DeviceAttribute {
            string: Some("a100".into()),
            ..Default::default()
        },
    );
    let view = DeviceView {
        driver: "gpu.example.com",
        attributes: Some(&attrs),
        capacity: None,
    };
    evaluate(&compile(expr)?, &view)
}

fn exceeded(expr: &str) -> bool {
    match eval(expr) {
        Err(e) => e == COST_LIMIT_EXCEEDED,
        Ok(_) => false,
    }
}

fn range(n: usize) -> String {
    format!("{:?}", (0..n).collect::<Vec<_>>())
}

/// Nested comprehensions: 3 units per iteration, as cel-go counts them. Oracle:
/// 11 outer elements evaluate, 12 exceed.
#[test]
fn nested_comprehensions() {
    let l30 = range(30);
    let nest = |k: usize| {
        let r = range(k);
        format!("{r}.all(a, {l30}.all(b, {l30}.all(c, {l30}.all(d, true))))")
    };
    assert_eq!(eval(&nest(11)), Ok(true));
    assert!(exceeded(&nest(12)));
}

/// A chain of `replace` doubling a string: Kubernetes' library charges the
/// traversal and construction (0.2 per byte of the target). Oracle: 22 steps
/// evaluate, 23 exceed.
#[test]
fn replace_doubling_chain() {
    let chain = |n: usize| {
        let mut e = r#"device.attributes["gpu.example.com"].model"#.to_string();
        for _ in 0..n {
            e.push_str(".replace('a', 'aa')");
        }
        e + " == 'x'"
    };
    assert_eq!(eval(&chain(22)), Ok(false));
    assert!(exceeded(&chain(23)));
}

/// A replacement that multiplies the string is refused before it is built, once
/// the budget could not pay for the result.
#[test]
fn replace_expansion() {
    let x = "x".repeat(5000);
    let once = format!("size('{}'.replace('', '{x}')) > 0", "a".repeat(100));
    assert_eq!(eval(&once), Ok(true));
    let twice = format!(
        "size('{}'.replace('', '{x}').replace('', '{x}')) > 0",
        "a".repeat(100)
    );
    assert!(exceeded(&twice));
}

/// `matches()` in a loop: string length x pattern length per match. Oracle: 97 x
/// 97 matches of a 1,000-byte string evaluate, 98 x 98 exceed.
#[test]
fn regex_in_a_loop() {
    let s = "ab".repeat(500);
    let grid = |k: usize| {
        let r = range(k);
        format!("{r}.exists(i, {r}.exists(j, '{s}'.matches('x+c')))")
    };
    assert_eq!(eval(&grid(97)), Ok(false));
    assert!(exceeded(&grid(98)));
}

/// A pattern whose compiled program is too large is an invalid pattern, whatever
/// the budget left.
#[test]
fn regex_size() {
    assert_eq!(eval("'aaa'.matches('a{1,100}')"), Ok(true));
    let err = eval("'aaa'.matches('(a{1,1000}){1,1000}')").unwrap_err();
    assert!(err.contains("not a valid regex"), "{err}");
}

/// `split` feeding nested loops: the list is built per evaluation and every
/// iteration is charged.
#[test]
fn split_and_nested_all() {
    let s = (0..200)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let nest = |depth: usize| {
        let mut e = "true".to_string();
        for d in 0..depth {
            e = format!("'{s}'.split(',').all(x{d}, {e})");
        }
        e
    };
    assert_eq!(eval(&nest(2)), Ok(true));
    assert!(exceeded(&nest(3)));
}

/// Lists built in loops (`map` of list literals) and lists concatenated: every
/// element built is charged, so memory follows the budget.
#[test]
fn built_lists() {
    let r = range(60);
    let small = format!("size({r}.map(a, {r}.map(b, [a, b, a, b]))) == 60");
    assert_eq!(eval(&small), Ok(true));
    let big = format!("size({r}.map(a, {r}.map(b, {r}.map(c, [a, b, c])))) == 60");
    assert!(exceeded(&big));
    let doubled = format!("[{r}].map(l, l + l + l + l).all(l, size(l) == 240)");
    assert_eq!(eval(&doubled), Ok(true));
    let mut chain = "l".to_string();
    for _ in 0..16 {
        chain = format!("[{chain}].map(l, l + l)[0]");
    }
    assert!(exceeded(&format!("[{r}].all(l, size({chain}) > 0)")));
}

/// String concatenation doubling inside a loop.
#[test]
fn concatenation() {
    let mut chain = "s".to_string();
    for _ in 0..10 {
        chain = format!("[{chain}].map(s, s + s)[0]");
    }
    let seed = "'abcdefgh'";
    assert_eq!(
        eval(&format!("[{seed}].all(s, size({chain}) == 8192)")),
        Ok(true)
    );
    for _ in 0..12 {
        chain = format!("[{chain}].map(s, s + s)[0]");
    }
    assert!(exceeded(&format!("[{seed}].all(s, size({chain}) > 0)")));
}

/// `join` with a long separator is refused before it is built.
#[test]
fn join_size() {
    let sep = "-".repeat(2000);
    let join = |n: usize| format!("size('{}'.split('').join('{sep}')) > 0", "x".repeat(n));
    assert_eq!(eval(&join(400)), Ok(true));
    assert!(exceeded(&join(5000)));
}

/// Running out of budget is never absorbed by `||`, `&&` or a loop, as other
/// errors are.
#[test]
fn exhaustion_is_not_absorbed() {
    let l30 = range(30);
    let heavy = format!("{l30}.all(a, {l30}.all(b, {l30}.all(c, {l30}.all(d, true))))");
    assert!(exceeded(&format!("{heavy} || true")));
    assert!(exceeded(&format!("[1, 2].exists(x, {heavy}) || true")));
    // An ordinary error still is.
    assert_eq!(
        eval(r#"device.attributes["gpu.example.com"].nope == "x" || true"#),
        Ok(true)
    );
}
