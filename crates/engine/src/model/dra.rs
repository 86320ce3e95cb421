//! Dynamic Resource Allocation objects (`resource.k8s.io/v1`) as the scheduler sees
//! them: API defaulting applied, fields of feature gates that are off by default in
//! v1.35 dropped (the API server drops them too), and the few shapes checked that the
//! allocator relies on, so bad input is reported at load time with its field path.

use k8s_openapi::api::resource::v1 as resource;

use super::pod::FieldError;
use super::quantity::Quantity;

pub use resource::{DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice};

/// `ExactDeviceRequest.allocationMode` values.
pub const MODE_EXACT_COUNT: &str = "ExactCount";
pub const MODE_ALL: &str = "All";

fn invalid(path: String, message: impl Into<String>) -> FieldError {
    FieldError {
        path,
        message: message.into(),
    }
}

/// DeviceClass: `extendedResourceName` needs DRAExtendedResource (off).
pub fn device_class_defaults(class: &mut DeviceClass) {
    class.spec.extended_resource_name = None;
}

/// ResourceSlice: drops the fields of DRADeviceTaints, DRAPartitionableDevices,
/// DRADeviceBindingConditions and DRAConsumableCapacity, then checks what the
/// allocator reads: driver, pool, attribute values and capacity quantities.
pub fn resource_slice_check(slice: &mut ResourceSlice) -> Result<(), FieldError> {
    let spec = &mut slice.spec;
    spec.shared_counters = None;
    spec.per_device_node_selection = None;
    if spec.driver.is_empty() {
        return Err(FieldError::missing("spec.driver"));
    }
    if spec.pool.name.is_empty() {
        return Err(FieldError::missing("spec.pool.name"));
    }
    if spec.pool.generation < 0 {
        return Err(invalid(
            "spec.pool.generation".into(),
            "must be greater than or equal to 0",
        ));
    }
    if spec.pool.resource_slice_count < 1 {
        return Err(invalid(
            "spec.pool.resourceSliceCount".into(),
            "must be greater than or equal to 1",
        ));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, dev) in spec.devices.iter_mut().flatten().enumerate() {
        dev.taints = None;
        dev.binding_conditions = None;
        dev.binding_failure_conditions = None;
        dev.binds_to_node = None;
        dev.allow_multiple_allocations = None;
        dev.consumes_counters = None;
        dev.node_name = None;
        dev.node_selector = None;
        dev.all_nodes = None;
        if dev.name.is_empty() {
            return Err(FieldError::missing(&format!("spec.devices[{i}].name")));
        }
        if !names.insert(dev.name.clone()) {
            return Err(FieldError {
                path: format!("spec.devices[{i}].name"),
                message: format!("Duplicate value: {:?}", dev.name),
            });
        }
        for (name, attr) in dev.attributes.iter().flatten() {
            let set = usize::from(attr.bool.is_some())
                + usize::from(attr.int.is_some())
                + usize::from(attr.string.is_some())
                + usize::from(attr.version.is_some());
            let path = || format!("spec.devices[{i}].attributes.{name}");
            if set != 1 {
                return Err(invalid(
                    path(),
                    "exactly one of `bool`, `int`, `string`, `version` is required",
                ));
            }
            if let Some(v) = &attr.version
                && Semver::parse(v, false).is_none()
            {
                return Err(invalid(
                    format!("{}.version", path()),
                    format!("{v:?}: must be a valid semantic version"),
                ));
            }
        }
        for (name, cap) in dev.capacity.iter_mut().flatten() {
            cap.request_policy = None;
            Quantity::parse(&cap.value.0).map_err(|e| {
                FieldError::quantity(format!("spec.devices[{i}].capacity.{name}.value"), e)
            })?;
        }
    }
    Ok(())
}

/// The device part of a ResourceClaim or ResourceClaimTemplate spec: allocationMode
/// defaults to ExactCount with count 1; request tolerations and capacity and the
/// `distinctAttribute` constraint belong to gates that are off. `prefix` is the
/// field path of the `devices` object.
pub fn device_claim_check(
    devices: &mut Option<resource::DeviceClaim>,
    prefix: &str,
) -> Result<(), FieldError> {
    let Some(devices) = devices else {
        return Ok(());
    };
    for (i, req) in devices.requests.iter_mut().flatten().enumerate() {
        let path = format!("{prefix}.requests[{i}]");
        if req.name.is_empty() {
            return Err(FieldError::missing(&format!("{path}.name")));
        }
        match (&mut req.exactly, &mut req.first_available) {
            (Some(ex), None) => {
                ex.tolerations = None;
                ex.capacity = None;
                default_mode(
                    &mut ex.allocation_mode,
                    &mut ex.count,
                    &ex.device_class_name,
                    &format!("{path}.exactly"),
                )?;
            }
            (None, Some(subs)) => {
                if subs.is_empty() {
                    return Err(FieldError::missing(&format!("{path}.firstAvailable")));
                }
                for (j, sub) in subs.iter_mut().enumerate() {
                    sub.tolerations = None;
                    sub.capacity = None;
                    let sub_path = format!("{path}.firstAvailable[{j}]");
                    if sub.name.is_empty() {
                        return Err(FieldError::missing(&format!("{sub_path}.name")));
                    }
                    default_mode(
                        &mut sub.allocation_mode,
                        &mut sub.count,
                        &sub.device_class_name,
                        &sub_path,
                    )?;
                }
            }
            _ => {
                return Err(invalid(
                    path,
                    "exactly one of `exactly`, `firstAvailable` is required",
                ));
            }
        }
    }
    for (i, c) in devices.constraints.iter_mut().flatten().enumerate() {
        c.distinct_attribute = None;
        if c.match_attribute.as_deref().is_none_or(str::is_empty) {
            return Err(FieldError::missing(&format!(
                "{prefix}.constraints[{i}].matchAttribute"
            )));
        }
    }
    Ok(())
}

fn default_mode(
    mode: &mut Option<String>,
    count: &mut Option<i64>,
    class: &str,
    path: &str,
) -> Result<(), FieldError> {
    if class.is_empty() {
        return Err(FieldError::missing(&format!("{path}.deviceClassName")));
    }
    let m = mode.get_or_insert_with(|| MODE_EXACT_COUNT.to_string());
    match m.as_str() {
        MODE_EXACT_COUNT => {
            let c = *count.get_or_insert(1);
            if c < 1 {
                return Err(invalid(
                    format!("{path}.count"),
                    format!("{c}: must be greater than zero"),
                ));
            }
        }
        MODE_ALL => {
            if count.is_some() {
                return Err(invalid(
                    format!("{path}.count"),
                    "must not be set when allocationMode is All",
                ));
            }
        }
        other => {
            return Err(invalid(
                format!("{path}.allocationMode"),
                format!("{other:?}: supported values: \"All\", \"ExactCount\""),
            ));
        }
    }
    Ok(())
}

/// ResourceClaim: the spec as for templates; an allocation's results must name a
/// driver, pool and device (they decide which devices are in use).
pub fn resource_claim_check(claim: &mut ResourceClaim) -> Result<(), FieldError> {
    claim
        .metadata
        .namespace
        .get_or_insert_with(|| "default".into());
    device_claim_check(&mut claim.spec.devices, "spec.devices")?;
    if let Some(alloc) = claim.status.as_mut().and_then(|s| s.allocation.as_mut())
        && let Some(devs) = alloc.devices.as_mut()
    {
        for (i, r) in devs.results.iter_mut().flatten().enumerate() {
            r.binding_conditions = None;
            r.binding_failure_conditions = None;
            r.consumed_capacity = None;
            r.share_id = None;
            r.tolerations = None;
            for (field, v) in [
                ("request", &r.request),
                ("driver", &r.driver),
                ("pool", &r.pool),
                ("device", &r.device),
            ] {
                if v.is_empty() {
                    return Err(FieldError::missing(&format!(
                        "status.allocation.devices.results[{i}].{field}"
                    )));
                }
            }
        }
    }
    Ok(())
}

pub fn resource_claim_template_check(t: &mut ResourceClaimTemplate) -> Result<(), FieldError> {
    t.metadata.namespace.get_or_insert_with(|| "default".into());
    device_claim_check(&mut t.spec.spec.devices, "spec.spec.devices")
}

/// A semantic version as Kubernetes DRA reads `version` attributes (semver 2.0.0;
/// `loose` accepts a missing minor/patch and a leading `v`, as `semver(s, true)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<String>,
    pub build: String,
}

impl Semver {
    pub fn parse(text: &str, loose: bool) -> Option<Semver> {
        let mut s = text;
        if loose {
            s = s.strip_prefix('v').unwrap_or(s);
        }
        let (s, build) = match s.split_once('+') {
            Some((a, b)) => {
                if b.is_empty() || !b.split('.').all(ident_ok) {
                    return None;
                }
                (a, b.to_string())
            }
            None => (s, String::new()),
        };
        let (core, pre) = match s.split_once('-') {
            Some((a, p)) => {
                let parts: Vec<String> = p.split('.').map(str::to_string).collect();
                if p.is_empty() || !parts.iter().all(|x| ident_ok(x)) {
                    return None;
                }
                if parts.iter().any(|x| numeric_leading_zero(x)) {
                    return None;
                }
                (a, parts)
            }
            None => (s, Vec::new()),
        };
        let nums: Vec<&str> = core.split('.').collect();
        if nums.len() > 3 || (!loose && nums.len() != 3) {
            return None;
        }
        let mut v = [0u64; 3];
        for (i, n) in nums.iter().enumerate() {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            if !loose && n.len() > 1 && n.starts_with('0') {
                return None;
            }
            v[i] = n.parse().ok()?;
        }
        Some(Semver {
            major: v[0],
            minor: v[1],
            patch: v[2],
            pre,
            build,
        })
    }

    /// Semver precedence (build metadata ignored).
    pub fn compare(&self, other: &Semver) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let c = (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if c != Ordering::Equal {
            return c;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let c = match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                _ => a.cmp(b),
            };
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}

fn ident_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn numeric_leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn semver_parse_and_order() {
        let v = |s| Semver::parse(s, false).unwrap();
        assert_eq!(v("1.2.3").minor, 2);
        assert!(Semver::parse("1.2", false).is_none());
        assert_eq!(Semver::parse("v1.2", true).unwrap().patch, 0);
        assert!(Semver::parse("01.2.3", false).is_none());
        assert!(Semver::parse("1.2.3-01", false).is_none());
        assert_eq!(v("1.2.3").compare(&v("1.10.0")), Ordering::Less);
        assert_eq!(v("1.2.3-alpha").compare(&v("1.2.3")), Ordering::Less);
        assert_eq!(
            v("1.2.3-alpha.1").compare(&v("1.2.3-alpha.beta")),
            Ordering::Less
        );
        assert_eq!(v("1.2.3+b1").compare(&v("1.2.3+b2")), Ordering::Equal);
    }

    #[test]
    fn claim_defaults_and_errors() {
        let mut c: ResourceClaim = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}}
        }))
        .unwrap();
        resource_claim_check(&mut c).unwrap();
        let ex = c.spec.devices.as_ref().unwrap().requests.as_ref().unwrap()[0]
            .exactly
            .clone()
            .unwrap();
        assert_eq!(
            (ex.allocation_mode.as_deref(), ex.count),
            (Some(MODE_EXACT_COUNT), Some(1))
        );
        let mut bad: ResourceClaim = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu",
                "exactly": {"deviceClassName": "g", "allocationMode": "Some"}}]}}
        }))
        .unwrap();
        let e = resource_claim_check(&mut bad).unwrap_err();
        assert_eq!(e.path, "spec.devices.requests[0].exactly.allocationMode");
    }
}
