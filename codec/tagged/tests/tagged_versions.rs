//! Three versions of a save game (fields added, removed, declared in another order): every
//! version reads every other version's bytes with the right values and defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bitlens_tagged::{self as tagged, Tagged};
use bitlens_testkit::fuzzing::tagged::{
    ItemV1, ItemV2, ItemV3, SaveV1, SaveV2, SaveV3, assert_compatible,
};

fn v1() -> SaveV1 {
    SaveV1 {
        name: "Ayla".into(),
        level: 3,
        gold: 500,
        position: [1.0, 2.0, -3.5],
        inventory: vec![ItemV1 { kind: 3, count: 5 }],
        hardcore: true,
    }
}

fn v2() -> SaveV2 {
    SaveV2 {
        quests: [("dragon".to_owned(), 2)].into_iter().collect(),
        level: 4,
        name: "Bo".into(),
        inventory: vec![ItemV2 {
            kind: 1,
            count: 2,
            durability: -5,
        }],
        position: [0.0, 0.5, 0.0],
        playtime_s: 3600,
        hardcore: false,
    }
}

fn read<T: Tagged>(bytes: &[u8]) -> T {
    tagged::decode_document(bytes).expect("every version reads every other")
}

#[test]
fn version_1_is_read_by_2_and_3() {
    let bytes = tagged::encode_document(&mut v1()).unwrap();
    assert_eq!(read::<SaveV1>(&bytes), v1());
    assert_eq!(
        read::<SaveV2>(&bytes),
        SaveV2 {
            quests: BTreeMap::new(),
            level: 3,
            name: "Ayla".into(),
            inventory: vec![ItemV2 {
                kind: 3,
                count: 5,
                durability: 0
            }],
            position: [1.0, 2.0, -3.5],
            playtime_s: 0,
            hardcore: true,
        }
    );
    assert_eq!(
        read::<SaveV3>(&bytes),
        SaveV3 {
            name: "Ayla".into(),
            checkpoint: None,
            difficulty: 0,
            level: 3,
            position: [1.0, 2.0, -3.5],
            inventory: vec![ItemV3 {
                enchantment: None,
                kind: 3,
                durability: 0
            }],
            playtime_s: 0,
            quests: BTreeMap::new(),
        }
    );
}

#[test]
fn version_2_is_read_by_1_and_3() {
    let bytes = tagged::encode_document(&mut v2()).unwrap();
    assert_eq!(read::<SaveV2>(&bytes), v2());
    assert_eq!(
        read::<SaveV1>(&bytes),
        SaveV1 {
            name: "Bo".into(),
            level: 4,
            gold: 0,
            position: [0.0, 0.5, 0.0],
            inventory: vec![ItemV1 { kind: 1, count: 2 }],
            hardcore: false,
        }
    );
    assert_eq!(
        read::<SaveV3>(&bytes),
        SaveV3 {
            name: "Bo".into(),
            checkpoint: None,
            difficulty: 0,
            level: 4,
            position: [0.0, 0.5, 0.0],
            inventory: vec![ItemV3 {
                enchantment: None,
                kind: 1,
                durability: -5
            }],
            playtime_s: 3600,
            quests: v2().quests,
        }
    );
}

#[test]
fn version_3_is_read_by_1_and_2() {
    let v3 = SaveV3::example();
    let bytes = tagged::encode_document(&mut v3.clone()).unwrap();
    assert_eq!(read::<SaveV3>(&bytes), v3);
    assert_eq!(
        read::<SaveV1>(&bytes),
        SaveV1 {
            name: "Ayla".into(),
            level: 17,
            gold: 0,
            position: v3.position,
            inventory: vec![
                ItemV1 { kind: 3, count: 0 },
                ItemV1 {
                    kind: 300,
                    count: 0
                }
            ],
            hardcore: false,
        }
    );
    assert_eq!(
        read::<SaveV2>(&bytes),
        SaveV2 {
            quests: v3.quests.clone(),
            level: 17,
            name: "Ayla".into(),
            inventory: vec![
                ItemV2 {
                    kind: 3,
                    count: 0,
                    durability: 100
                },
                ItemV2 {
                    kind: 300,
                    count: 0,
                    durability: -1
                }
            ],
            position: v3.position,
            playtime_s: 1 << 60,
            hardcore: false,
        }
    );
}

#[test]
fn removed_ids_are_declared() {
    assert_eq!(SaveV1::REMOVED_IDS, &[] as &[u64]);
    assert_eq!(SaveV2::REMOVED_IDS, &[2]);
    assert_eq!(SaveV3::REMOVED_IDS, &[2, 5]);
    assert_eq!(ItemV3::REMOVED_IDS, &[1]);
}

#[test]
fn every_pair_keeps_shared_fields() {
    let written = [
        (
            tagged::dump(&mut v1()),
            tagged::encode_document(&mut v1()).unwrap(),
        ),
        (
            tagged::dump(&mut v2()),
            tagged::encode_document(&mut v2()).unwrap(),
        ),
        (
            tagged::dump(&mut SaveV3::example()),
            tagged::encode_document(&mut SaveV3::example()).unwrap(),
        ),
    ];
    for (dump, bytes) in &written {
        assert_compatible(
            &dump.fields,
            &tagged::dump(&mut read::<SaveV1>(bytes)).fields,
        );
        assert_compatible(
            &dump.fields,
            &tagged::dump(&mut read::<SaveV2>(bytes)).fields,
        );
        assert_compatible(
            &dump.fields,
            &tagged::dump(&mut read::<SaveV3>(bytes)).fields,
        );
    }
}

/// `captures/savegame.tagged` is `SaveV3::example()`; set `BITLENS_BLESS=1` to rewrite it.
#[test]
fn savegame_capture_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../captures/savegame.tagged");
    let bytes = tagged::encode_document(&mut SaveV3::example()).unwrap();
    if std::env::var_os("BITLENS_BLESS").is_some() || !path.exists() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let on_disk = std::fs::read(&path).unwrap();
    assert_eq!(
        on_disk,
        bytes,
        "run with BITLENS_BLESS=1 to rewrite {}",
        path.display()
    );
    // Every version opens the save file.
    read::<SaveV1>(&on_disk);
    read::<SaveV2>(&on_disk);
    assert_eq!(read::<SaveV3>(&on_disk), SaveV3::example());
}
