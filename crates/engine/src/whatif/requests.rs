//! Setting a pod's effective request (what NodeResourcesFit filters with: containers,
//! the largest init container, sidecars, pod-level requests, overhead) to a value,
//! either on the model's aggregate or spread over a manifest's containers.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;

use crate::model::resource::{CPU, MEMORY};
use crate::model::{Pod, Quantity};

/// A resource amount as a person writes it: cpu in cores or millicores, bytes in
/// the largest binary unit that divides them.
pub fn show(resource: &str, v: i64) -> String {
    if resource == CPU {
        return if v % 1000 == 0 {
            (v / 1000).to_string()
        } else {
            format!("{v}m")
        };
    }
    if resource == MEMORY || resource == "ephemeral-storage" || resource.starts_with("hugepages-") {
        for (unit, size) in [("Gi", 1i64 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
            if v != 0 && v % size == 0 {
                return format!("{}{unit}", v / size);
            }
        }
    }
    v.to_string()
}

fn units(resource: &str, q: Quantity) -> i64 {
    if resource == CPU {
        q.milli_value()
    } else {
        q.value()
    }
}

/// Sets the model pod's effective request of `resource` to `q`. The model keeps the
/// pod's aggregate only, so the change is the pod's as a whole; the scoring requests
/// follow (cpu/memory defaults stop applying once the containers request some).
pub fn set_effective_request(pod: &mut Pod, resource: &str, q: Quantity) -> Result<String, String> {
    let new = units(resource, q);
    let old = pod.requests.get(resource);
    let overhead = pod.overhead().get(resource);
    if new < overhead {
        return Err(format!(
            "{} is below the pod's overhead of {}",
            show(resource, new),
            show(resource, overhead)
        ));
    }
    if new == 0 && !matches!(resource, CPU | MEMORY) {
        pod.requests.scalar.remove(resource);
        pod.score_requests.scalar.remove(resource);
    } else {
        pod.requests.set(resource, new);
        match resource {
            CPU if new > overhead => {
                pod.non_zero_milli_cpu = new;
                pod.score_requests.milli_cpu = new;
            }
            MEMORY if new > overhead => {
                pod.non_zero_memory = new;
                pod.score_requests.memory = new;
            }
            CPU | MEMORY => {}
            _ => pod.score_requests.set(resource, new),
        }
    }
    let mut note = format!(
        "{resource} request {} → {}: set on the pod as a whole (the model keeps the \
         containers' aggregate, not each container's request)",
        show(resource, old),
        show(resource, new)
    );
    if overhead > 0 {
        note.push_str(&format!("; overhead {} included", show(resource, overhead)));
    }
    Ok(note)
}

type List = BTreeMap<String, KQuantity>;

fn get(list: Option<&List>, r: &str) -> Quantity {
    list.and_then(|l| l.get(r))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .unwrap_or_default()
}

/// A container's request of `r` after API defaulting (a limit without a request).
fn request_of(c: &core::Container, r: &str) -> Quantity {
    let res = c.resources.as_ref();
    match res.and_then(|x| x.requests.as_ref()).and_then(|l| l.get(r)) {
        Some(_) => get(res.and_then(|x| x.requests.as_ref()), r),
        None => get(res.and_then(|x| x.limits.as_ref()), r),
    }
}

/// Sets request `r` of a container to `q`, raising its limit when below (the API
/// server rejects a request above the limit).
fn set_request(c: &mut core::Container, r: &str, q: Quantity) {
    let res = c.resources.get_or_insert_default();
    let text = KQuantity(q.to_string());
    res.requests
        .get_or_insert_default()
        .insert(r.to_string(), text.clone());
    if let Some(l) = res.limits.as_mut()
        && l.get(r)
            .is_some_and(|lim| Quantity::parse(&lim.0).is_ok_and(|lim| lim < q))
    {
        l.insert(r.to_string(), text);
    }
}

fn is_sidecar(c: &core::Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// Sets the manifest pod's effective request of `r` to `q` and says how it was
/// spread: on the pod-level request when the pod sets one for `r`; otherwise the
/// regular containers share what the sidecars and overhead leave, in proportion to
/// what they requested (evenly when none did; the rounding remainder to the first),
/// and init containers that would exceed it are lowered to fit.
pub fn set_request_in_manifest(
    pod: &mut core::Pod,
    r: &str,
    q: Quantity,
) -> Result<String, String> {
    let spec = pod.spec.as_mut().ok_or("the pod has no spec")?;
    let overhead = get(spec.overhead.as_ref(), r);
    if q < overhead {
        return Err(format!("{q} is below the pod's overhead of {overhead}"));
    }
    let target = Quantity(q.0 - overhead.0);
    let pod_level = spec.resources.as_ref().is_some_and(|x| {
        x.requests
            .iter()
            .chain(x.limits.iter())
            .any(|l| l.contains_key(r))
    });
    if pod_level && (r == CPU || r == MEMORY || r.starts_with("hugepages-")) {
        let res = spec.resources.get_or_insert_default();
        let text = KQuantity(target.to_string());
        res.requests
            .get_or_insert_default()
            .insert(r.into(), text.clone());
        if let Some(l) = res.limits.as_mut()
            && l.get(r)
                .is_some_and(|lim| Quantity::parse(&lim.0).is_ok_and(|v| v < target))
        {
            l.insert(r.into(), text);
        }
        return Ok(format!("pod-level resources.requests.{r} = {target}"));
    }
    let sidecars: i128 = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| is_sidecar(c))
        .map(|c| request_of(c, r).0)
        .sum();
    let share = target.0 - sidecars;
    if share < 0 {
        return Err(format!(
            "the sidecars alone request {} of {r}, more than {target}",
            Quantity(sidecars)
        ));
    }
    let n = spec.containers.len();
    if n == 0 {
        return Err("the pod has no containers".into());
    }
    let current: Vec<i128> = spec.containers.iter().map(|c| request_of(c, r).0).collect();
    let total: i128 = current.iter().sum();
    // Shares in whole milli-units, so every written quantity prints exactly.
    const MILLI: i128 = 1_000_000;
    let share_m = share / MILLI;
    let mut parts: Vec<i128> = current
        .iter()
        .map(|&c| {
            if total == 0 {
                share_m / n as i128
            } else {
                share_m * c / total
            }
        })
        .collect();
    let rest = share_m - parts.iter().sum::<i128>();
    parts[0] += rest;
    let mut spread = Vec::new();
    for (c, p) in spec.containers.iter_mut().zip(&parts) {
        let v = Quantity(p * MILLI + if spread.is_empty() { share % MILLI } else { 0 });
        set_request(c, r, v);
        spread.push(format!("{}={v}", c.name));
    }
    // Init containers run before the app ones: none may need more than the target.
    let mut restartable = 0i128;
    let mut lowered = Vec::new();
    for c in spec.init_containers.iter_mut().flatten() {
        if is_sidecar(c) {
            restartable += request_of(c, r).0;
            continue;
        }
        if request_of(c, r).0 + restartable > target.0 {
            let v = Quantity((target.0 - restartable).max(0));
            set_request(c, r, v);
            lowered.push(format!("{}={v}", c.name));
        }
    }
    let mut note = format!("{r} over containers: {}", spread.join(", "));
    if sidecars > 0 {
        note.push_str(&format!("; sidecars keep {}", Quantity(sidecars)));
    }
    if !lowered.is_empty() {
        note.push_str(&format!(
            "; init containers lowered: {}",
            lowered.join(", ")
        ));
    }
    if overhead.0 > 0 {
        note.push_str(&format!("; overhead {overhead} included"));
    }
    Ok(note)
}
