//! The save game of the tagged bench and of `examples/tagged_count.rs`: the tagged struct and
//! its prost mirror, field for field (u16/u8/i16 as protobuf's uint32/int32 since protobuf has
//! nothing narrower; f32 as float; strings; repeated messages; a map as repeated pairs).

use bitlens_tagged::Tagged;

#[derive(Tagged, Clone, Debug, Default, PartialEq)]
pub struct Item {
    #[tag(0)]
    pub kind: u16,
    #[tag(1)]
    pub count: u8,
    #[tag(2)]
    pub durability: i16,
}

#[derive(Tagged, Clone, Debug, Default, PartialEq)]
pub struct Save {
    #[tag(0)]
    pub name: String,
    #[tag(1)]
    pub level: u32,
    #[tag(2)]
    pub position: [f32; 3],
    #[tag(3)]
    pub inventory: Vec<Item>,
    #[tag(4)]
    pub playtime_s: u64,
    #[tag(5)]
    pub quests: Vec<(u32, i32)>,
    #[tag(6)]
    pub checkpoint: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PItem {
    #[prost(uint32, tag = "1")]
    pub kind: u32,
    #[prost(uint32, tag = "2")]
    pub count: u32,
    #[prost(sint32, tag = "3")]
    pub durability: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PQuest {
    #[prost(uint32, tag = "1")]
    pub id: u32,
    #[prost(sint32, tag = "2")]
    pub state: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PSave {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(uint32, tag = "2")]
    pub level: u32,
    #[prost(float, repeated, tag = "3")]
    pub position: Vec<f32>,
    #[prost(message, repeated, tag = "4")]
    pub inventory: Vec<PItem>,
    #[prost(uint64, tag = "5")]
    pub playtime_s: u64,
    #[prost(message, repeated, tag = "6")]
    pub quests: Vec<PQuest>,
    #[prost(string, tag = "7")]
    pub checkpoint: String,
}

pub fn save() -> Save {
    Save {
        name: "Ayla the Unbroken".into(),
        level: 37,
        position: [1024.5, -12.25, 77.0],
        inventory: (0..40)
            .map(|i| Item {
                kind: 100 + i * 7,
                count: (i % 9) as u8 + 1,
                durability: 250 - (i as i16) * 13,
            })
            .collect(),
        playtime_s: 1_234_567,
        quests: (0..25).map(|i| (1000 + i, (i as i32 % 5) - 2)).collect(),
        checkpoint: "north gate, second bridge".into(),
    }
}

pub fn mirror(s: &Save) -> PSave {
    PSave {
        name: s.name.clone(),
        level: s.level,
        position: s.position.to_vec(),
        inventory: s
            .inventory
            .iter()
            .map(|i| PItem {
                kind: i.kind.into(),
                count: i.count.into(),
                durability: i.durability.into(),
            })
            .collect(),
        playtime_s: s.playtime_s,
        quests: s
            .quests
            .iter()
            .map(|&(id, state)| PQuest { id, state })
            .collect(),
        checkpoint: s.checkpoint.clone(),
    }
}
