//! In-tree → CSI volume translation, as `k8s.io/csi-translation-lib` v0.35 does it:
//! which in-tree plugins have a CSI driver, the volume handle a translated volume
//! gets, and how a PV's zone affinity is rewritten to the driver's topology key.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1 as core;

use super::volume_util::{LABEL_BETA_REGION, LABEL_BETA_ZONE, LABEL_REGION, LABEL_ZONE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum InTreePlugin {
    GcePd,
    AwsEbs,
    Cinder,
    AzureDisk,
    AzureFile,
    VSphere,
    Portworx,
}

const UNSPECIFIED: &str = "UNSPECIFIED";

impl InTreePlugin {
    pub const ALL: [InTreePlugin; 7] = [
        InTreePlugin::GcePd,
        InTreePlugin::AwsEbs,
        InTreePlugin::Cinder,
        InTreePlugin::AzureDisk,
        InTreePlugin::AzureFile,
        InTreePlugin::VSphere,
        InTreePlugin::Portworx,
    ];

    pub fn in_tree_name(self) -> &'static str {
        match self {
            InTreePlugin::GcePd => "kubernetes.io/gce-pd",
            InTreePlugin::AwsEbs => "kubernetes.io/aws-ebs",
            InTreePlugin::Cinder => "kubernetes.io/cinder",
            InTreePlugin::AzureDisk => "kubernetes.io/azure-disk",
            InTreePlugin::AzureFile => "kubernetes.io/azure-file",
            InTreePlugin::VSphere => "kubernetes.io/vsphere-volume",
            InTreePlugin::Portworx => "kubernetes.io/portworx-volume",
        }
    }

    pub fn csi_driver(self) -> &'static str {
        match self {
            InTreePlugin::GcePd => "pd.csi.storage.gke.io",
            InTreePlugin::AwsEbs => "ebs.csi.aws.com",
            InTreePlugin::Cinder => "cinder.csi.openstack.org",
            InTreePlugin::AzureDisk => "disk.csi.azure.com",
            InTreePlugin::AzureFile => "file.csi.azure.com",
            InTreePlugin::VSphere => "csi.vsphere.vmware.com",
            InTreePlugin::Portworx => "pxd.portworx.com",
        }
    }

    /// `IsMigratableIntreePluginByName` + `GetCSINameFromInTreeName`.
    pub fn from_in_tree_name(name: &str) -> Option<InTreePlugin> {
        Self::ALL.into_iter().find(|p| p.in_tree_name() == name)
    }

    /// `CanSupport`: the plugin that translates this PV (`IsPVMigratable`).
    pub fn of_pv(pv: &core::PersistentVolume) -> Option<InTreePlugin> {
        let s = pv.spec.as_ref()?;
        Self::ALL.into_iter().find(|p| match p {
            InTreePlugin::GcePd => s.gce_persistent_disk.is_some(),
            InTreePlugin::AwsEbs => s.aws_elastic_block_store.is_some(),
            InTreePlugin::Cinder => s.cinder.is_some(),
            InTreePlugin::AzureDisk => s.azure_disk.is_some(),
            InTreePlugin::AzureFile => s.azure_file.is_some(),
            InTreePlugin::VSphere => s.vsphere_volume.is_some(),
            InTreePlugin::Portworx => s.portworx_volume.is_some(),
        })
    }

    /// `CanSupportInline` (`IsInlineMigratable`).
    pub fn of_inline(v: &core::Volume) -> Option<InTreePlugin> {
        Self::ALL.into_iter().find(|p| match p {
            InTreePlugin::GcePd => v.gce_persistent_disk.is_some(),
            InTreePlugin::AwsEbs => v.aws_elastic_block_store.is_some(),
            InTreePlugin::Cinder => v.cinder.is_some(),
            InTreePlugin::AzureDisk => v.azure_disk.is_some(),
            InTreePlugin::AzureFile => v.azure_file.is_some(),
            InTreePlugin::VSphere => v.vsphere_volume.is_some(),
            InTreePlugin::Portworx => v.portworx_volume.is_some(),
        })
    }
}

/// What a translated PV is used for here: its CSI identity and its node affinity.
#[derive(Clone, Debug, PartialEq)]
pub struct TranslatedPv {
    pub driver: &'static str,
    pub handle: String,
    pub node_affinity: Option<core::VolumeNodeAffinity>,
}

/// `TranslateInTreePVToCSI`. `Ok(None)` when the PV is not an in-tree PV with a
/// translation.
pub fn translate_pv(pv: &core::PersistentVolume) -> Result<Option<TranslatedPv>, String> {
    let Some(plugin) = InTreePlugin::of_pv(pv) else {
        return Ok(None);
    };
    let Some(spec) = pv.spec.as_ref() else {
        return Ok(None);
    };
    let labels = pv.metadata.labels.clone().unwrap_or_default();
    let mut affinity = spec.node_affinity.clone();
    let handle = match plugin {
        InTreePlugin::GcePd => {
            let src = spec.gce_persistent_disk.as_ref().map_or("", |s| &s.pd_name);
            let mut zones_label = labels.get(LABEL_BETA_ZONE).map_or("", |s| s.as_str());
            if zones_label.is_empty() {
                zones_label = labels.get(LABEL_ZONE).map_or("", |s| s.as_str());
            }
            let zones: Vec<&str> = zones_label.split("__").collect();
            let handle = if zones.len() == 1 && !zones[0].is_empty() {
                format!("projects/{UNSPECIFIED}/zones/{}/disks/{src}", zones[0])
            } else if zones.len() > 1 {
                let region = gce_region_from_zones(&zones)
                    .map_err(|e| format!("failed to get region from zones: {e}"))?;
                format!("projects/{UNSPECIFIED}/regions/{region}/disks/{src}")
            } else {
                format!("projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{src}")
            };
            topology_in_tree_to_csi(&mut affinity, &labels, "topology.gke.io/zone");
            handle
        }
        InTreePlugin::AwsEbs => {
            let id = spec
                .aws_elastic_block_store
                .as_ref()
                .map_or("", |s| &s.volume_id);
            let handle = ebs_volume_id(id)
                .map_err(|e| format!("failed to translate Kubernetes ID to EBS Volume ID {e}"))?;
            topology_in_tree_to_csi(&mut affinity, &labels, "topology.ebs.csi.aws.com/zone");
            handle
        }
        InTreePlugin::Cinder => {
            let handle = spec
                .cinder
                .as_ref()
                .map_or("", |s| &s.volume_id)
                .to_string();
            topology_in_tree_to_csi(
                &mut affinity,
                &labels,
                "topology.cinder.csi.openstack.org/zone",
            );
            handle
        }
        InTreePlugin::AzureDisk => {
            let src = spec.azure_disk.as_ref();
            azure_disk_kind_supported(src.and_then(|s| s.kind.as_deref()))?;
            src.map_or("", |s| &s.disk_uri).to_string()
        }
        InTreePlugin::AzureFile => {
            let src = spec.azure_file.as_ref();
            let secret = src.map_or("", |s| &s.secret_name);
            let account = azure_storage_account(secret).unwrap_or(secret);
            let resource_group = pv
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("kubernetes.io/azure-file-resource-group"))
                .map_or("", |s| s.as_str());
            let namespace = match src.and_then(|s| s.secret_namespace.as_deref()) {
                Some(ns) => ns,
                None => spec
                    .claim_ref
                    .as_ref()
                    .and_then(|c| c.namespace.as_deref())
                    .unwrap_or(""),
            };
            if namespace.is_empty() {
                return Err(
                    "could not find a secret namespace in PersistentVolumeSource or ClaimRef"
                        .into(),
                );
            }
            format!(
                "{resource_group}#{account}#{}#{}#{namespace}",
                src.map_or("", |s| &s.share_name),
                pv.metadata.name.as_deref().unwrap_or("")
            )
        }
        InTreePlugin::VSphere => {
            let handle = spec
                .vsphere_volume
                .as_ref()
                .map_or("", |s| &s.volume_path)
                .to_string();
            topology_vsphere_to_csi(&mut affinity, &labels);
            handle
        }
        InTreePlugin::Portworx => spec
            .portworx_volume
            .as_ref()
            .map_or("", |s| &s.volume_id)
            .to_string(),
    };
    Ok(Some(TranslatedPv {
        driver: plugin.csi_driver(),
        handle,
        node_affinity: affinity,
    }))
}

/// `TranslateInTreeInlineVolumeToCSI`: the driver and volume handle of an inline
/// in-tree volume. `Ok(None)` when no plugin translates it.
pub fn translate_inline(
    v: &core::Volume,
    pod_namespace: &str,
) -> Result<Option<(&'static str, String)>, String> {
    let Some(plugin) = InTreePlugin::of_inline(v) else {
        return Ok(None);
    };
    let handle = match plugin {
        InTreePlugin::GcePd => format!(
            "projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{}",
            v.gce_persistent_disk.as_ref().map_or("", |s| &s.pd_name)
        ),
        InTreePlugin::AwsEbs => ebs_volume_id(
            v.aws_elastic_block_store
                .as_ref()
                .map_or("", |s| &s.volume_id),
        )
        .map_err(|e| format!("failed to translate Kubernetes ID to EBS Volume ID {e}"))?,
        InTreePlugin::Cinder => v.cinder.as_ref().map_or("", |s| &s.volume_id).to_string(),
        InTreePlugin::AzureDisk => {
            let src = v.azure_disk.as_ref();
            azure_disk_kind_supported(src.and_then(|s| s.kind.as_deref()))?;
            src.map_or("", |s| &s.disk_uri).to_string()
        }
        InTreePlugin::AzureFile => {
            let src = v.azure_file.as_ref();
            let secret = src.map_or("", |s| &s.secret_name);
            let account = azure_storage_account(secret).unwrap_or(secret);
            let namespace = if pod_namespace.is_empty() {
                "default"
            } else {
                pod_namespace
            };
            format!(
                "#{account}#{}#{}#{namespace}",
                src.map_or("", |s| &s.share_name),
                v.name
            )
        }
        InTreePlugin::VSphere => v
            .vsphere_volume
            .as_ref()
            .map_or("", |s| &s.volume_path)
            .to_string(),
        InTreePlugin::Portworx => v
            .portworx_volume
            .as_ref()
            .map_or("", |s| &s.volume_id)
            .to_string(),
    };
    Ok(Some((plugin.csi_driver(), handle)))
}

/// Only managed Azure disks migrate. A disk without `kind` gets `Shared` from the API
/// server's defaulting, so it does not.
fn azure_disk_kind_supported(kind: Option<&str>) -> Result<(), String> {
    let kind = kind.unwrap_or("Shared");
    if kind.eq_ignore_ascii_case("Managed") {
        Ok(())
    } else {
        Err(format!("kind({kind}) is not supported in csi migration"))
    }
}

/// The account in a secret name `…azure-storage-account-<account>-secret…` (the
/// upstream regexp is unanchored and greedy).
fn azure_storage_account(secret: &str) -> Option<&str> {
    const PREFIX: &str = "azure-storage-account-";
    let start = secret.find(PREFIX)? + PREFIX.len();
    let rest = &secret[start..];
    let end = rest.rfind("-secret")?;
    (end > 0).then(|| &rest[..end])
}

/// `KubernetesVolumeIDToEBSVolumeID`: `aws://<zone>/<vol-id>` → `<vol-id>`; a bare id
/// is kept.
fn ebs_volume_id(id: &str) -> Result<String, String> {
    let Some(rest) = id.strip_prefix("aws://") else {
        return Ok(id.to_string());
    };
    // url.Parse: fragment and query are not part of the path; the host ends at '/'.
    let rest = rest.split('#').next().unwrap_or("");
    let rest = rest.split('?').next().unwrap_or("");
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let aws_id = path.trim_matches('/');
    if aws_id.starts_with("vol-") && !aws_id.contains('/') {
        Ok(aws_id.to_string())
    } else {
        Err(format!("Invalid format for AWS volume ({id})"))
    }
}

/// Go's `%v` of a `sets.String`: `map[a:{} b:{}]`.
fn go_set(s: &BTreeSet<String>) -> String {
    let items: Vec<String> = s.iter().map(|k| format!("{k}:{{}}")).collect();
    format!("map[{}]", items.join(" "))
}

fn gce_region_from_zones(zones: &[&str]) -> Result<String, String> {
    if zones.is_empty() {
        return Err("no zones specified".into());
    }
    let mut regions = BTreeSet::new();
    for z in zones {
        let parts: Vec<&str> = z.split('-').collect();
        if parts.len() != 3 {
            return Err(format!(
                "zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {z}"
            ));
        }
        regions.insert(parts[..2].join("-"));
    }
    if regions.len() != 1 {
        return Err(format!(
            "multiple or no regions gotten from zones, got: {}",
            go_set(&regions)
        ));
    }
    Ok(regions.into_iter().next().unwrap_or_default())
}

fn terms_mut(
    affinity: &mut Option<core::VolumeNodeAffinity>,
) -> Option<&mut Vec<core::NodeSelectorTerm>> {
    let terms = &mut affinity.as_mut()?.required.as_mut()?.node_selector_terms;
    (!terms.is_empty()).then_some(terms)
}

fn has_key(affinity: &Option<core::VolumeNodeAffinity>, key: &str) -> bool {
    affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
        .is_some_and(|r| {
            r.node_selector_terms
                .iter()
                .any(|t| t.match_expressions.iter().flatten().any(|e| e.key == key))
        })
}

/// `getTopologyValues`: the values of `key` over all terms, sorted and unique.
fn topology_values(affinity: &Option<core::VolumeNodeAffinity>, key: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    if let Some(r) = affinity.as_ref().and_then(|a| a.required.as_ref()) {
        for t in &r.node_selector_terms {
            for e in t.match_expressions.iter().flatten() {
                if e.key == key {
                    out.extend(e.values.iter().flatten().cloned());
                }
            }
        }
    }
    out.into_iter().collect()
}

fn replace_topology(affinity: &mut Option<core::VolumeNodeAffinity>, old: &str, new: &str) {
    let Some(terms) = terms_mut(affinity) else {
        return;
    };
    for t in terms {
        for e in t.match_expressions.iter_mut().flatten() {
            if e.key == old {
                e.key = new.to_string();
            }
        }
    }
}

/// `addTopology`: an `In` requirement on the trimmed, non-empty zones, appended to
/// every term (one term is made when there is none).
fn add_topology(affinity: &mut Option<core::VolumeNodeAffinity>, key: &str, zones: &[&str]) {
    let zones: BTreeSet<String> = zones
        .iter()
        .map(|z| z.trim())
        .filter(|z| !z.is_empty())
        .map(str::to_string)
        .collect();
    if zones.is_empty() {
        return;
    }
    let a = affinity.get_or_insert_with(Default::default);
    let r = a.required.get_or_insert_with(Default::default);
    if r.node_selector_terms.is_empty() {
        r.node_selector_terms.push(Default::default());
    }
    let req = core::NodeSelectorRequirement {
        key: key.to_string(),
        operator: "In".into(),
        values: Some(zones.into_iter().collect()),
    };
    for t in &mut r.node_selector_terms {
        t.match_expressions
            .get_or_insert_with(Vec::new)
            .push(req.clone());
    }
}

/// `getTopologyLabel`: GA keys unless only beta ones are in use.
fn topology_labels(
    affinity: &Option<core::VolumeNodeAffinity>,
    labels: &BTreeMap<String, String>,
) -> (&'static str, &'static str) {
    if has_key(affinity, LABEL_ZONE) {
        return (LABEL_ZONE, LABEL_REGION);
    }
    if has_key(affinity, LABEL_BETA_ZONE) {
        return (LABEL_BETA_ZONE, LABEL_BETA_REGION);
    }
    if labels.contains_key(LABEL_ZONE) {
        return (LABEL_ZONE, LABEL_REGION);
    }
    if labels.contains_key(LABEL_BETA_ZONE) {
        return (LABEL_BETA_ZONE, LABEL_BETA_REGION);
    }
    (LABEL_ZONE, LABEL_REGION)
}

/// `translateTopologyFromInTreeToCSI`.
fn topology_in_tree_to_csi(
    affinity: &mut Option<core::VolumeNodeAffinity>,
    labels: &BTreeMap<String, String>,
    csi_key: &str,
) {
    let (zone_label, region_label) = topology_labels(affinity, labels);
    if !topology_values(affinity, zone_label).is_empty() {
        replace_topology(affinity, zone_label, csi_key);
    } else if let Some(label) = labels.get(zone_label) {
        let zones: Vec<&str> = label.split("__").collect();
        add_topology(affinity, csi_key, &zones);
    }
    if region_label == LABEL_BETA_REGION && !topology_values(affinity, region_label).is_empty() {
        replace_topology(affinity, region_label, LABEL_REGION);
    }
}

/// `translateTopologyFromInTreevSphereToCSI`.
fn topology_vsphere_to_csi(
    affinity: &mut Option<core::VolumeNodeAffinity>,
    labels: &BTreeMap<String, String>,
) {
    const ZONE: &str = "topology.csi.vmware.com/zone";
    const REGION: &str = "topology.csi.vmware.com/region";
    let (zone_label, region_label) = topology_labels(affinity, labels);
    if !topology_values(affinity, zone_label).is_empty() {
        replace_topology(affinity, zone_label, ZONE);
    } else if let Some(label) = labels.get(zone_label).filter(|l| !l.is_empty()) {
        add_topology(affinity, ZONE, &[label.as_str()]);
    }
    if !topology_values(affinity, region_label).is_empty() {
        replace_topology(affinity, region_label, REGION);
    } else if let Some(label) = labels.get(region_label).filter(|l| !l.is_empty()) {
        add_topology(affinity, REGION, &[label.as_str()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pv(v: serde_json::Value) -> core::PersistentVolume {
        serde_json::from_value(v).unwrap()
    }

    fn keys(t: &TranslatedPv) -> Vec<(String, Vec<String>)> {
        t.node_affinity
            .as_ref()
            .and_then(|a| a.required.as_ref())
            .map(|r| {
                r.node_selector_terms
                    .iter()
                    .flat_map(|t| t.match_expressions.iter().flatten())
                    .map(|e| (e.key.clone(), e.values.clone().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn plugin_names_and_drivers() {
        assert_eq!(
            InTreePlugin::from_in_tree_name("kubernetes.io/aws-ebs").map(|p| p.csi_driver()),
            Some("ebs.csi.aws.com")
        );
        assert_eq!(
            InTreePlugin::from_in_tree_name("kubernetes.io/gce-pd").map(|p| p.csi_driver()),
            Some("pd.csi.storage.gke.io")
        );
        assert_eq!(InTreePlugin::from_in_tree_name("kubernetes.io/rbd"), None);
        assert_eq!(InTreePlugin::from_in_tree_name("example.com/csi"), None);
    }

    #[test]
    fn ebs_ids() {
        let cases = [
            ("vol-123", Ok("vol-123".to_string())),
            ("aws://us-east-1a/vol-123", Ok("vol-123".into())),
            ("aws:///vol-123", Ok("vol-123".into())),
            (
                "aws://vol-123",
                Err("Invalid format for AWS volume (aws://vol-123)".to_string()),
            ),
            (
                "aws://zone/disk-1",
                Err("Invalid format for AWS volume (aws://zone/disk-1)".into()),
            ),
        ];
        for (id, want) in cases {
            assert_eq!(ebs_volume_id(id), want, "{id}");
        }
    }

    #[test]
    fn gce_pd_handles_by_zone_labels() {
        let zonal = pv(
            json!({"metadata": {"name": "p", "labels": {LABEL_ZONE: "us-central1-a"}},
            "spec": {"gcePersistentDisk": {"pdName": "d"}}}),
        );
        let t = translate_pv(&zonal).unwrap().unwrap();
        assert_eq!(t.driver, "pd.csi.storage.gke.io");
        assert_eq!(t.handle, "projects/UNSPECIFIED/zones/us-central1-a/disks/d");
        // The zone label becomes a requirement on the driver's key.
        assert_eq!(
            keys(&t),
            vec![("topology.gke.io/zone".into(), vec!["us-central1-a".into()])]
        );

        let regional = pv(json!({"metadata": {"name": "p",
            "labels": {LABEL_BETA_ZONE: "us-central1-a__us-central1-b"}},
            "spec": {"gcePersistentDisk": {"pdName": "d"}}}));
        let t = translate_pv(&regional).unwrap().unwrap();
        assert_eq!(t.handle, "projects/UNSPECIFIED/regions/us-central1/disks/d");

        let bad = pv(json!({"metadata": {"name": "p",
            "labels": {LABEL_ZONE: "us-central1-a__europe-west1-b"}},
            "spec": {"gcePersistentDisk": {"pdName": "d"}}}));
        assert_eq!(
            translate_pv(&bad).unwrap_err(),
            "failed to get region from zones: multiple or no regions gotten from zones, got: map[europe-west1:{} us-central1:{}]"
        );

        let none = pv(json!({"metadata": {"name": "p"},
            "spec": {"gcePersistentDisk": {"pdName": "d"}}}));
        assert_eq!(
            translate_pv(&none).unwrap().unwrap().handle,
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"
        );
    }

    #[test]
    fn ebs_affinity_zone_key_replaced_and_beta_region_renamed() {
        let p = pv(json!({"metadata": {"name": "p"},
            "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": LABEL_BETA_ZONE, "operator": "In", "values": ["us-east-1a"]},
                    {"key": LABEL_BETA_REGION, "operator": "In", "values": ["us-east-1"]}]}]}}}}));
        let t = translate_pv(&p).unwrap().unwrap();
        assert_eq!(t.handle, "vol-1");
        assert_eq!(
            keys(&t),
            vec![
                (
                    "topology.ebs.csi.aws.com/zone".into(),
                    vec!["us-east-1a".into()]
                ),
                (LABEL_REGION.into(), vec!["us-east-1".into()]),
            ]
        );
    }

    #[test]
    fn azure_disk_needs_managed_kind() {
        let shared = pv(json!({"metadata": {"name": "p"},
            "spec": {"azureDisk": {"diskName": "d", "diskURI": "uri"}}}));
        assert_eq!(
            translate_pv(&shared).unwrap_err(),
            "kind(Shared) is not supported in csi migration"
        );
        let managed = pv(json!({"metadata": {"name": "p"},
            "spec": {"azureDisk": {"diskName": "d", "diskURI": "uri", "kind": "Managed"}}}));
        let t = translate_pv(&managed).unwrap().unwrap();
        assert_eq!((t.driver, t.handle.as_str()), ("disk.csi.azure.com", "uri"));
    }

    #[test]
    fn azure_file_handles() {
        let p = pv(json!({"metadata": {"name": "p"},
            "spec": {"azureFile": {"secretName": "azure-storage-account-acct-secret",
                "shareName": "share"},
                "claimRef": {"namespace": "ns", "name": "c"}}}));
        assert_eq!(
            translate_pv(&p).unwrap().unwrap().handle,
            "#acct#share#p#ns"
        );
        let no_ns = pv(json!({"metadata": {"name": "p"},
            "spec": {"azureFile": {"secretName": "s", "shareName": "share"}}}));
        assert!(translate_pv(&no_ns).is_err());
        let v: core::Volume = serde_json::from_value(json!({"name": "vol",
            "azureFile": {"secretName": "plain", "shareName": "share"}}))
        .unwrap();
        assert_eq!(
            translate_inline(&v, "").unwrap(),
            Some(("file.csi.azure.com", "#plain#share#vol#default".to_string()))
        );
    }

    #[test]
    fn inline_handles() {
        let gce: core::Volume =
            serde_json::from_value(json!({"name": "v", "gcePersistentDisk": {"pdName": "d"}}))
                .unwrap();
        assert_eq!(
            translate_inline(&gce, "ns").unwrap(),
            Some((
                "pd.csi.storage.gke.io",
                "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d".to_string()
            ))
        );
        let ebs: core::Volume = serde_json::from_value(
            json!({"name": "v", "awsElasticBlockStore": {"volumeID": "aws://z/bad"}}),
        )
        .unwrap();
        assert_eq!(
            translate_inline(&ebs, "ns").unwrap_err(),
            "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z/bad)"
        );
        let empty: core::Volume =
            serde_json::from_value(json!({"name": "v", "emptyDir": {}})).unwrap();
        assert_eq!(translate_inline(&empty, "ns").unwrap(), None);
    }

    #[test]
    fn vsphere_adds_zone_and_region_from_labels() {
        let p = pv(
            json!({"metadata": {"name": "p", "labels": {LABEL_ZONE: "z1", LABEL_REGION: "r1"}},
            "spec": {"vsphereVolume": {"volumePath": "[ds] v.vmdk"}}}),
        );
        let t = translate_pv(&p).unwrap().unwrap();
        assert_eq!(t.handle, "[ds] v.vmdk");
        assert_eq!(
            keys(&t),
            vec![
                ("topology.csi.vmware.com/zone".into(), vec!["z1".into()]),
                ("topology.csi.vmware.com/region".into(), vec!["r1".into()]),
            ]
        );
    }
}
