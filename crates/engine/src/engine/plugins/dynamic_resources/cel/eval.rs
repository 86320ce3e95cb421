//! The budgeted CEL evaluator. It walks a selector's parsed expression itself and
//! charges every step as cel-go's runtime cost tracker does
//! (`interpreter/runtimecost.go`, with Kubernetes' library costs from
//! `apiserver/pkg/cel/library/cost.go`), so an evaluation stops at
//! `resource.CELSelectorExpressionMaxCost` with upstream's error. Where the `cel`
//! crate does work cel-go does not charge for (copying a value into its own
//! representation, building a large result), that work is charged as well, before it
//! is done: time and memory stay proportional to the budget. Single operations whose
//! semantics the crate defines are handed to it one at a time, their operands bound
//! to temporaries, so their answers and errors stay the crate's.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

use cel::common::ast::{
    CallExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, MapEntryExpr, MapExpr,
    SelectExpr, StructExpr, StructFieldExpr, operators,
};
use cel::objects::Key;
use cel::{Context, ExecutionError, Value};

/// cel-go's `common.StringTraversalCostFactor`, as a divisor: one unit per ten bytes.
const BYTES_PER_UNIT: u64 = 10;
/// `common.ListCreateBaseCost` and `common.MapCreateBaseCost`.
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
/// `common.RegexStringLengthCostFactor`, as a divisor.
const REGEX_CHARS_PER_UNIT: u64 = 4;
/// Largest compiled program of one regular expression (RE2 has a similar cap).
pub const MAX_REGEX_PROGRAM_BYTES: usize = 1 << 20;
/// Distinct patterns kept compiled per thread.
const REGEX_CACHE_SIZE: usize = 64;

/// cel-go's wording when the budget runs out.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// Why an evaluation stopped: a CEL error (which `&&`, `||` and `all`/`exists` may
/// absorb), or the budget (which nothing absorbs).
pub enum Fault {
    Error(ExecutionError),
    Cancelled,
}

impl From<ExecutionError> for Fault {
    fn from(e: ExecutionError) -> Self {
        if matches!(&e, ExecutionError::FunctionError { message, .. } if message == COST_LIMIT_EXCEEDED)
        {
            Fault::Cancelled
        } else {
            Fault::Error(e)
        }
    }
}

type Res = Result<Value, Fault>;

thread_local! {
    /// The budget left to the evaluation running on this thread, for the library
    /// functions that size their result before building it ([`afford`]).
    static LEFT: Cell<u64> = const { Cell::new(u64::MAX) };
    static REGEXES: RefCell<BTreeMap<String, Result<Arc<regex::Regex>, String>>> =
        const { RefCell::new(BTreeMap::new()) };
}

/// For a library function about to build a result of `bytes` bytes in `elements`
/// values: the evaluation's error when its budget could not pay for it.
pub fn afford(bytes: u64, elements: u64) -> Result<(), ExecutionError> {
    if units(bytes).saturating_add(elements) > LEFT.with(Cell::get) {
        return Err(ExecutionError::function_error("", COST_LIMIT_EXCEEDED));
    }
    Ok(())
}

fn units(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_UNIT)
}

/// A selector expression planned for evaluation: operators resolved, and for each
/// operation the crate may answer, its template (operands replaced by `@0`, `@1`...).
pub enum Node {
    Const(Value),
    /// `device` or a comprehension's variable.
    Var(String),
    /// A name the crate resolves (a type name, an undeclared name).
    Crate(IdedExpr),
    Select {
        operand: Box<Node>,
        field: String,
        test: bool,
        template: IdedExpr,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<[Node; 3]>),
    /// A comprehension's loop condition: true unless exactly `false`.
    NotStrictlyFalse(Box<Node>),
    /// An operator or function on evaluated operands (a member call's target first).
    Call {
        name: String,
        args: Vec<Node>,
        template: IdedExpr,
    },
    List(Vec<Node>),
    /// A map, struct or optional-element list literal, built by the crate.
    Build {
        args: Vec<Node>,
        template: IdedExpr,
        base: u64,
    },
    Loop(Box<Loop>),
}

pub struct Loop {
    range: Node,
    iter_var: String,
    accu_var: String,
    init: Node,
    cond: Node,
    step: Node,
    result: Node,
    /// `map`/`filter`: `[guard ?] @result + [item]`, appended in place.
    append: Option<(Option<Node>, Node)>,
    /// `all`/`exists`: `@result && x` / `@result || x`, whose errors a later
    /// element may override.
    fold: Option<bool>,
}

fn temp(id: u64, i: usize) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Ident(format!("@{i}")),
    }
}

fn temps(id: u64, n: usize) -> Vec<IdedExpr> {
    (0..n).map(|i| temp(id, i)).collect()
}

/// The root of `a.b.c` when `e` spells a qualified name.
fn name_root(e: &IdedExpr) -> Option<&str> {
    match &e.expr {
        Expr::Ident(n) => Some(n),
        Expr::Select(s) if !s.test => name_root(&s.operand),
        _ => None,
    }
}

pub fn plan(e: &IdedExpr, bound: &mut Vec<String>) -> Node {
    match &e.expr {
        Expr::Literal(_) => match Value::resolve(e, &Context::empty()) {
            Ok(v) => Node::Const(v),
            Err(_) => Node::Crate(e.clone()),
        },
        Expr::Ident(n) if bound.contains(n) => Node::Var(n.clone()),
        Expr::Select(s) if name_root(e).is_none_or(|r| bound.iter().any(|b| b == r)) => {
            Node::Select {
                operand: Box::new(plan(&s.operand, bound)),
                field: s.field.clone(),
                test: s.test,
                template: IdedExpr {
                    id: e.id,
                    expr: Expr::Select(SelectExpr {
                        operand: Box::new(temp(e.id, 0)),
                        field: s.field.clone(),
                        test: s.test,
                    }),
                },
            }
        }
        Expr::Call(c) => plan_call(e.id, c, bound),
        Expr::List(l) if l.optional_indices.is_empty() => {
            let items: Vec<Node> = l.elements.iter().map(|x| plan(x, bound)).collect();
            // cel-go builds a list of constants once, when planning: it costs nothing.
            if items.iter().all(|x| matches!(x, Node::Const(_))) {
                let values = items.into_iter().filter_map(|x| match x {
                    Node::Const(v) => Some(v),
                    _ => None,
                });
                return Node::Const(Value::List(Arc::new(values.collect())));
            }
            Node::List(items)
        }
        Expr::List(l) => Node::Build {
            args: l.elements.iter().map(|x| plan(x, bound)).collect(),
            template: IdedExpr {
                id: e.id,
                expr: Expr::List(ListExpr::new_with_optionals(
                    temps(e.id, l.elements.len()),
                    l.optional_indices.clone(),
                )),
            },
            base: LIST_CREATE,
        },
        Expr::Map(m) => plan_entries(e.id, &m.entries, bound, MAP_CREATE, |entries| {
            Expr::Map(MapExpr { entries })
        }),
        Expr::Struct(s) => plan_entries(e.id, &s.entries, bound, 40, |entries| {
            Expr::Struct(StructExpr {
                type_name: s.type_name.clone(),
                entries,
            })
        }),
        Expr::Comprehension(c) => {
            let range = plan(&c.iter_range, bound);
            let init = plan(&c.accu_init, bound);
            bound.push(c.accu_var.clone());
            bound.push(c.iter_var.clone());
            let l = Loop {
                range,
                init,
                cond: plan(&c.loop_cond, bound),
                step: plan(&c.loop_step, bound),
                result: plan(&c.result, bound),
                append: append_step(c, bound),
                fold: fold_step(c),
                iter_var: c.iter_var.clone(),
                accu_var: c.accu_var.clone(),
            };
            bound.truncate(bound.len() - 2);
            Node::Loop(Box::new(l))
        }
        Expr::Ident(_) | Expr::Select(_) | Expr::Unspecified => Node::Crate(e.clone()),
    }
}

/// Map or struct literal: every key and value evaluated here, the literal built by
/// the crate from them.
fn plan_entries(
    id: u64,
    entries: &[IdedEntryExpr],
    bound: &mut Vec<String>,
    base: u64,
    build: impl FnOnce(Vec<IdedEntryExpr>) -> Expr,
) -> Node {
    let mut args = Vec::new();
    let mut out = Vec::new();
    for entry in entries {
        let expr = match &entry.expr {
            EntryExpr::MapEntry(m) => {
                args.push(plan(&m.key, bound));
                args.push(plan(&m.value, bound));
                EntryExpr::MapEntry(MapEntryExpr {
                    key: temp(id, args.len() - 2),
                    value: temp(id, args.len() - 1),
                    optional: m.optional,
                })
            }
            EntryExpr::StructField(f) => {
                args.push(plan(&f.value, bound));
                EntryExpr::StructField(StructFieldExpr {
                    field: f.field.clone(),
                    value: temp(id, args.len() - 1),
                    optional: f.optional,
                })
            }
        };
        out.push(IdedEntryExpr { id: entry.id, expr });
    }
    Node::Build {
        args,
        template: IdedExpr {
            id,
            expr: build(out),
        },
        base,
    }
}

fn plan_call(id: u64, c: &CallExpr, bound: &mut Vec<String>) -> Node {
    let mut p = |x: &IdedExpr| Box::new(plan(x, bound));
    match (c.func_name.as_str(), c.args.as_slice(), &c.target) {
        (operators::LOGICAL_AND, [a, b], None) => return Node::And(p(a), p(b)),
        (operators::LOGICAL_OR, [a, b], None) => return Node::Or(p(a), p(b)),
        (operators::CONDITIONAL, [a, b, x], None) => {
            return Node::Cond(Box::new([*p(a), *p(b), *p(x)]));
        }
        (operators::NOT_STRICTLY_FALSE, [a], None) => return Node::NotStrictlyFalse(p(a)),
        _ => {}
    }
    // A target spelling a name that is no variable is a function's namespace
    // (`optional.of(x)`): it stays in the template for the crate to resolve.
    let namespace = c
        .target
        .as_deref()
        .filter(|t| name_root(t).is_some_and(|r| !bound.iter().any(|b| b == r)));
    let mut args: Vec<Node> = Vec::new();
    let target = match (&c.target, namespace) {
        (Some(t), None) => {
            args.push(plan(t, bound));
            Some(Box::new(temp(id, 0)))
        }
        (Some(t), Some(_)) => Some(t.clone()),
        (None, _) => None,
    };
    let first = args.len();
    args.extend(c.args.iter().map(|x| plan(x, bound)));
    Node::Call {
        name: c.func_name.clone(),
        template: IdedExpr {
            id,
            expr: Expr::Call(CallExpr {
                func_name: c.func_name.clone(),
                target,
                args: (first..args.len()).map(|i| temp(id, i)).collect(),
            }),
        },
        args,
    }
}

fn is_ident(e: &IdedExpr, name: &str) -> bool {
    matches!(&e.expr, Expr::Ident(n) if n == name)
}

/// The `[guard ?] @result + [item]` step of `map`/`filter` (the crate builds these
/// in place too, as cel-go does).
fn append_step(
    c: &cel::common::ast::ComprehensionExpr,
    bound: &mut Vec<String>,
) -> Option<(Option<Node>, Node)> {
    let accu = c.accu_var.as_str();
    fn item<'e>(e: &'e IdedExpr, accu: &str) -> Option<&'e IdedExpr> {
        match &e.expr {
            Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => {
                match call.args.as_slice() {
                    [
                        lhs,
                        rhs @ IdedExpr {
                            expr: Expr::List(l),
                            ..
                        },
                    ] if is_ident(lhs, accu) && l.optional_indices.is_empty() => Some(rhs),
                    _ => None,
                }
            }
            _ => None,
        }
    }
    if !is_ident(&c.result, accu) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return None;
    }
    if let Expr::Call(call) = &c.loop_step.expr
        && call.func_name == operators::CONDITIONAL
        && call.target.is_none()
    {
        return match call.args.as_slice() {
            [guard, step, otherwise] if is_ident(otherwise, accu) => {
                let items = item(step, accu)?;
                Some((Some(plan(guard, bound)), plan(items, bound)))
            }
            _ => None,
        };
    }
    let items = item(&c.loop_step, accu)?;
    Some((None, plan(items, bound)))
}

fn fold_step(c: &cel::common::ast::ComprehensionExpr) -> Option<bool> {
    let Expr::Call(call) = &c.loop_step.expr else {
        return None;
    };
    let folds =
        call.target.is_none() && call.args.first().is_some_and(|a| is_ident(a, &c.accu_var));
    match call.func_name.as_str() {
        operators::LOGICAL_AND if folds => Some(false),
        operators::LOGICAL_OR if folds => Some(true),
        _ => None,
    }
}

/// cel-go's `actualSize`: the length of a string, bytes, list or map, else 1.
fn size(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.len() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        _ => 1,
    }
}

/// What a value holds beyond one scalar: bytes of text, and values inside lists
/// and maps.
#[derive(Clone, Copy, Default)]
struct Footprint {
    bytes: u64,
    values: u64,
}

impl Footprint {
    fn of(v: &Value) -> Self {
        fn walk(v: &Value, f: &mut Footprint) {
            match v {
                Value::String(s) => f.bytes += s.len() as u64,
                Value::Bytes(b) => f.bytes += b.len() as u64,
                Value::List(l) => l.iter().for_each(|x| {
                    f.values += 1;
                    walk(x, f)
                }),
                Value::Map(m) => {
                    for (k, x) in m.map.iter() {
                        f.values += 1;
                        if let Key::String(s) = k {
                            f.bytes += s.len() as u64;
                        }
                        walk(x, f);
                    }
                }
                _ => {}
            }
        }
        let mut f = Footprint::default();
        walk(v, &mut f);
        f
    }

    fn sum(values: &[Value]) -> Self {
        values
            .iter()
            .map(Self::of)
            .fold(Self::default(), |a, b| Footprint {
                bytes: a.bytes + b.bytes,
                values: a.values + b.values,
            })
    }

    /// Building it: a unit per ten bytes and one per value.
    fn build_cost(self) -> u64 {
        units(self.bytes) + self.values
    }

    /// Copying it into the crate's representation: a unit per thousand bytes (a
    /// plain copy) and one per value (an allocation). cel-go copies nothing, so
    /// this is charged only where it exceeds what upstream charges.
    fn copy_cost(self) -> u64 {
        self.bytes / 1000 + self.values
    }

    fn min(self, other: Self) -> Self {
        Footprint {
            bytes: self.bytes.min(other.bytes),
            values: self.values.min(other.values),
        }
    }
}

/// The upstream cost of a call on evaluated arguments (target first), as cel-go
/// and Kubernetes' library charge it.
fn call_cost(name: &str, args: &[Value], result: &Value) -> u64 {
    let arg = |i: usize| args.get(i).map_or(1, size);
    match name {
        "startsWith" | "endsWith" | "lowerAscii" | "upperAscii" | "substring" | "trim"
        | "quantity" | "isQuantity" | "url" | "cidr" | "isIP" | "isCIDR" | "ip" => units(arg(0)),
        "contains" => units(arg(0)) * units(arg(1)),
        "matches" => units(1 + arg(0)) * arg(1).div_ceil(REGEX_CHARS_PER_UNIT),
        "replace" | "split" => units(2 * arg(0)),
        "join" => units(2 * size(result)),
        "indexOf" | "lastIndexOf" | "isSorted" | "sum" | "max" | "min" => match args.first() {
            Some(Value::List(l)) => l.len() as u64,
            _ => units(arg(0)),
        },
        "string" | "bytes" => units(arg(0)),
        operators::EQUALS | operators::NOT_EQUALS => units(arg(0).min(arg(1))),
        operators::LESS
        | operators::LESS_EQUALS
        | operators::GREATER
        | operators::GREATER_EQUALS => match (args.first(), args.get(1)) {
            (Some(Value::String(_)), Some(Value::String(_)))
            | (Some(Value::Bytes(_)), Some(Value::Bytes(_))) => units(arg(0).min(arg(1))),
            _ => 1,
        },
        operators::ADD => match args.first() {
            Some(Value::String(_) | Value::Bytes(_)) => units(arg(0) + arg(1)),
            _ => 1,
        },
        operators::IN => arg(1),
        _ => 1,
    }
}

fn type_name(v: &Value) -> String {
    super::type_name(v).to_string()
}

fn as_bool(v: Result<Value, Fault>) -> Result<Result<bool, ExecutionError>, Fault> {
    match v {
        Ok(Value::Bool(b)) => Ok(Ok(b)),
        Ok(other) => Ok(Err(ExecutionError::UnexpectedType {
            got: type_name(&other),
            want: "bool".into(),
        })),
        Err(Fault::Error(e)) => Ok(Err(e)),
        Err(Fault::Cancelled) => Err(Fault::Cancelled),
    }
}

fn key_of(v: &Value) -> Option<Key> {
    match v {
        Value::String(s) => Some(Key::String(s.clone())),
        Value::Int(i) => Some(Key::Int(*i)),
        Value::UInt(u) => Some(Key::Uint(*u)),
        Value::Bool(b) => Some(Key::Bool(*b)),
        _ => None,
    }
}

/// One evaluation: the budget, the variables in scope and the crate's context for
/// what it answers.
pub struct Eval<'c> {
    spent: u64,
    limit: u64,
    scope: Vec<(String, Value)>,
    base: &'c Context<'static, 'static>,
}

impl<'c> Eval<'c> {
    pub fn new(base: &'c Context<'static, 'static>, limit: u64, device: Value) -> Self {
        Eval {
            spent: 0,
            limit,
            scope: vec![("device".to_string(), device)],
            base,
        }
    }

    fn charge(&mut self, cost: u64) -> Result<(), Fault> {
        self.spent = self.spent.saturating_add(cost);
        if self.spent > self.limit {
            return Err(Fault::Cancelled);
        }
        Ok(())
    }

    /// The crate's answer to `template` with `args` bound to `@0`, `@1`...: charged
    /// what upstream charges for it, or the copying in and the result's building
    /// when that is more. The copying in is paid before it is done, and library
    /// functions check that the budget left can pay for their result ([`afford`]).
    fn delegate(&mut self, template: &IdedExpr, args: Vec<Value>, name: &str) -> Res {
        let copy_in = Footprint::sum(&args).copy_cost();
        self.charge(copy_in)?;
        LEFT.with(|l| l.set(self.limit - self.spent));
        let mut ctx = self.base.new_inner_scope();
        for (i, v) in args.iter().enumerate() {
            ctx.add_variable_from_value(format!("@{i}"), v.clone());
        }
        let result = Value::resolve(template, &ctx);
        LEFT.with(|l| l.set(u64::MAX));
        let result = result?;
        let work = copy_in + Footprint::of(&result).build_cost();
        self.charge(call_cost(name, &args, &result).max(work) - copy_in)?;
        Ok(result)
    }

    pub fn eval(&mut self, n: &Node) -> Res {
        match n {
            Node::Const(v) => Ok(v.clone()),
            Node::Var(name) => {
                self.charge(1)?;
                let v = self.scope.iter().rev().find(|(n, _)| n == name);
                Ok(v.map_or(Value::Null, |(_, v)| v.clone()))
            }
            Node::Crate(e) => {
                self.charge(1)?;
                Ok(Value::resolve(e, self.base)?)
            }
            Node::Select {
                operand,
                field,
                test,
                template,
            } => {
                let v = self.eval(operand)?;
                self.charge(1)?;
                if let Value::Map(m) = &v {
                    let hit = m.map.get(&Key::String(Arc::new(field.clone())));
                    match (hit, test) {
                        (Some(x), false) => return Ok(x.clone()),
                        (hit, true) => return Ok(Value::Bool(hit.is_some())),
                        (None, false) => {
                            return Err(ExecutionError::NoSuchKey(Arc::new(field.clone())).into());
                        }
                    }
                }
                self.delegate(template, vec![v], "_._")
            }
            Node::And(a, b) => self.logical(a, b, false),
            Node::Or(a, b) => self.logical(a, b, true),
            Node::Cond(c) => {
                let [cond, yes, no] = c.as_ref();
                let v = self.eval(cond);
                if as_bool(v)?? {
                    self.eval(yes)
                } else {
                    self.eval(no)
                }
            }
            Node::NotStrictlyFalse(x) => {
                let v = self.eval(x);
                self.charge(1)?;
                Ok(Value::Bool(as_bool(v)?.unwrap_or(true)))
            }
            Node::Call {
                name,
                args,
                template,
            } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.call(name, vals, template)
            }
            Node::List(items) => {
                self.charge(LIST_CREATE.max(items.len() as u64))?;
                let mut out = Vec::with_capacity(items.len());
                for x in items {
                    out.push(self.eval(x)?);
                }
                Ok(Value::List(Arc::new(out)))
            }
            Node::Build {
                args,
                template,
                base,
            } => {
                self.charge(*base)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.delegate(template, vals, "")
            }
            Node::Loop(l) => self.comprehension(l),
        }
    }

    /// `&&` and `||` as the crate evaluates them: `error || true` is true, `error
    /// && false` is false, anything else with an error is that error.
    fn logical(&mut self, a: &Node, b: &Node, or: bool) -> Res {
        let left = self.eval(a);
        let left = as_bool(left)?;
        if left == Ok(or) {
            return Ok(Value::Bool(or));
        }
        let right = self.eval(b)?;
        match (left, &right) {
            (Ok(_), Value::Bool(r)) => Ok(Value::Bool(*r)),
            (Err(_), Value::Bool(r)) if *r == or => Ok(Value::Bool(or)),
            (left, _) => {
                let op = if or { "_||_" } else { "_&&_" };
                let right_type = type_name(&right);
                Err(Fault::Error(match left {
                    Err(ExecutionError::UnexpectedType { got, want }) if want == "bool" => {
                        ExecutionError::no_such_overload(op, vec![got, right_type])
                    }
                    Err(e) => e,
                    Ok(_) => ExecutionError::no_such_overload(op, vec!["bool".into(), right_type]),
                }))
            }
        }
    }

    fn call(&mut self, name: &str, vals: Vec<Value>, template: &IdedExpr) -> Res {
        let member = matches!(&template.expr, Expr::Call(c) if c.target.is_some());
        if let Some(v) = self.native(name, &vals, member)? {
            return Ok(v);
        }
        self.delegate(template, vals, name)
    }

    /// The operations answered here (the common ones, and those whose cost the
    /// crate would not bound); `None` hands the call to the crate.
    fn native(&mut self, name: &str, v: &[Value], member: bool) -> Result<Option<Value>, Fault> {
        use Value::{Bool, Int, List, Map, String as Str, UInt};
        let upstream = |r: &Value| call_cost(name, v, r);
        let answer = match (name, v) {
            (operators::EQUALS | operators::NOT_EQUALS, [a, b]) => {
                let work = Footprint::of(a).min(Footprint::of(b)).build_cost();
                self.charge(upstream(&Value::Null).max(work))?;
                Bool((a == b) == (name == operators::EQUALS))
            }
            (
                operators::LESS
                | operators::LESS_EQUALS
                | operators::GREATER
                | operators::GREATER_EQUALS,
                [a, b],
            ) if !matches!(a, Value::Opaque(_) | List(_) | Map(_)) => {
                let Some(ord) = a.partial_cmp(b) else {
                    return Ok(None);
                };
                self.charge(upstream(&Value::Null))?;
                Bool(match name {
                    operators::LESS => ord.is_lt(),
                    operators::LESS_EQUALS => ord.is_le(),
                    operators::GREATER => ord.is_gt(),
                    _ => ord.is_ge(),
                })
            }
            (operators::ADD, [Str(a), Str(b)]) => {
                self.charge(units(a.len() as u64 + b.len() as u64))?;
                Str(Arc::new(format!("{a}{b}")))
            }
            (operators::ADD, [List(a), List(b)]) => {
                self.charge(1 + a.len() as u64 + b.len() as u64)?;
                List(Arc::new(a.iter().chain(b.iter()).cloned().collect()))
            }
            (operators::IN, [x, List(l)]) => {
                let needle = Footprint::of(x);
                let work: u64 = l
                    .iter()
                    .map(|e| Footprint::of(e).min(needle).build_cost())
                    .sum();
                self.charge(work.max(l.len() as u64))?;
                Bool(l.iter().any(|e| e == x))
            }
            (operators::IN, [x, Map(m)]) => {
                let Some(k) = key_of(x) else { return Ok(None) };
                self.charge(1)?;
                Bool(m.map.contains_key(&k))
            }
            (operators::INDEX, [List(l), i]) => {
                let i = match i {
                    Int(i) => usize::try_from(*i).ok(),
                    UInt(u) => usize::try_from(*u).ok(),
                    _ => return Ok(None),
                };
                let Some(x) = i.and_then(|i| l.get(i)) else {
                    return Ok(None);
                };
                self.charge(1)?;
                x.clone()
            }
            (operators::INDEX, [Map(m), k]) => {
                let Some(x) = key_of(k).and_then(|k| m.map.get(&k)) else {
                    return Ok(None);
                };
                self.charge(1)?;
                x.clone()
            }
            (operators::LOGICAL_NOT, [Bool(b)]) => {
                self.charge(1)?;
                Bool(!b)
            }
            ("size", [Str(s)]) => {
                // Counting characters is a fast scan: charged as a copy is.
                self.charge((s.len() as u64 / 1000).max(1))?;
                Int(s.chars().count() as i64)
            }
            ("size", [List(l)]) => {
                self.charge(1)?;
                Int(l.len() as i64)
            }
            ("size", [Map(m)]) => {
                self.charge(1)?;
                Int(m.map.len() as i64)
            }
            ("contains" | "startsWith" | "endsWith", [Str(s), Str(x)]) if member => {
                self.charge(upstream(&Value::Null).max(units(s.len() as u64)))?;
                Bool(match name {
                    "contains" => s.contains(x.as_str()),
                    "startsWith" => s.starts_with(x.as_str()),
                    _ => s.ends_with(x.as_str()),
                })
            }
            ("matches", [Str(s), Str(re)]) => {
                self.charge(upstream(&Value::Null))?;
                Bool(compiled(re)?.is_match(s))
            }
            _ => return Ok(None),
        };
        Ok(Some(answer))
    }

    fn comprehension(&mut self, l: &Loop) -> Res {
        let range = self.eval(&l.range)?;
        let items: Vec<Value> = match &range {
            Value::List(items) => items.iter().cloned().collect(),
            // Keys in their order, not the map's: the result must not vary by run.
            Value::Map(m) => {
                let mut keys: Vec<&Key> = m.map.keys().collect();
                keys.sort();
                keys.into_iter().map(Value::from).collect()
            }
            other => {
                return Err(Fault::Error(ExecutionError::UnexpectedType {
                    got: type_name(other),
                    want: "iterable".into(),
                }));
            }
        };
        let init = self.eval(&l.init)?;
        if let (Some((guard, item)), Value::List(start)) = (&l.append, &init)
            && start.is_empty()
        {
            return self.append_loop(l, items, guard.as_ref(), item);
        }
        let depth = self.scope.len();
        self.scope.push((l.accu_var.clone(), init));
        self.scope.push((l.iter_var.clone(), Value::Null));
        let out = self.fold(l, items);
        let out = out.and_then(|()| self.eval(&l.result));
        self.scope.truncate(depth);
        out
    }

    fn fold(&mut self, l: &Loop, items: Vec<Value>) -> Result<(), Fault> {
        let accu = self.scope.len() - 2;
        let mut pending: Option<ExecutionError> = None;
        for item in items {
            let cond = self.eval(&l.cond);
            if !as_bool(cond)?.map_err(Fault::Error)? {
                break;
            }
            self.scope[accu + 1].1 = item;
            let step = self.eval(&l.step);
            match (step, l.fold) {
                (Err(Fault::Error(e)), Some(_)) => pending = Some(e),
                (Err(e), _) => return Err(e),
                (Ok(v), Some(absorbing))
                    if pending.is_some() && !matches!(v, Value::Bool(b) if b == absorbing) => {}
                (Ok(v), _) => {
                    pending = None;
                    self.scope[accu].1 = v;
                }
            }
        }
        pending.map_or(Ok(()), |e| Err(Fault::Error(e)))
    }

    /// `map`/`filter`: each element costs what `@result + [item]` costs upstream.
    fn append_loop(
        &mut self,
        l: &Loop,
        items: Vec<Value>,
        guard: Option<&Node>,
        item: &Node,
    ) -> Res {
        let mut out = Vec::new();
        let depth = self.scope.len();
        self.scope.push((l.accu_var.clone(), Value::Null));
        self.scope.push((l.iter_var.clone(), Value::Null));
        let run = |ev: &mut Self, out: &mut Vec<Value>| -> Result<(), Fault> {
            for x in items {
                ev.scope[depth + 1].1 = x;
                if let Some(g) = guard {
                    let keep = ev.eval(g);
                    if !as_bool(keep)?.map_err(Fault::Error)? {
                        ev.charge(1)?;
                        continue;
                    }
                }
                ev.charge(2)?;
                if let Value::List(add) = ev.eval(item)? {
                    ev.charge(add.len() as u64)?;
                    out.extend(add.iter().cloned());
                }
            }
            Ok(())
        };
        let done = run(self, &mut out);
        self.scope.truncate(depth);
        done.map(|()| Value::List(Arc::new(out)))
    }
}

/// The compiled pattern, from this thread's cache; a pattern whose program would
/// exceed [`MAX_REGEX_PROGRAM_BYTES`] is an error, as an invalid one is.
fn compiled(re: &str) -> Result<Arc<regex::Regex>, Fault> {
    REGEXES
        .with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some(r) = cache.get(re) {
                return r.clone();
            }
            if cache.len() >= REGEX_CACHE_SIZE {
                cache.clear();
            }
            let r = regex::RegexBuilder::new(re)
                .size_limit(MAX_REGEX_PROGRAM_BYTES)
                .dfa_size_limit(MAX_REGEX_PROGRAM_BYTES)
                .build()
                .map(Arc::new)
                .map_err(|e| format!("'{re}' not a valid regex:\n{e}"));
            cache.insert(re.to_string(), r.clone());
            r
        })
        .map_err(|message| {
            Fault::Error(ExecutionError::FunctionError {
                function: "matches".into(),
                message,
            })
        })
}
