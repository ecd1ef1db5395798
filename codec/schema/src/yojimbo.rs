//! The `[yojimbo]` section (SCHEMA.md, "yojimbo games"): what a yojimbo connection was built
//! with and its wire does not carry (reliable.io's receive limits, the channels, the message
//! factory's types), with every message body an ordinary schema struct.
//!
//! [`config`] turns a loaded section into the [`bitlens_yojimbo::Config`] the yojimbo layer reads
//! with: each message type's [`BodyReader`] runs its body struct through the schema's
//! interpreter on the very streams the layer reads the connection packet with, so a traced read
//! records the body's fields under the message's path (`entries[0].messages[3].body.sequence`).
//!
//! ```
//! use bitlens_schema::{Schema, yojimbo};
//! use std::sync::Arc;
//!
//! let schema = Arc::new(Schema::from_toml(r#"
//!     [yojimbo]
//!     channels = [{ type = "unreliable_unordered" }, { max_block_size = 10240 }]
//!     messages = ["Chat", { name = "Ping", body = false }]
//!
//!     [struct.Chat]
//!     fields = [{ name = "text", type = "string", max_len = 64 }]
//! "#, "game.toml")?);
//! let config = yojimbo::config(&schema).expect("the schema has a [yojimbo] section");
//! assert_eq!(config.channels.len(), 2);
//! assert_eq!(config.message_types[1].name, "Ping");
//! assert!(config.validate().is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use bitlens_codec::error::Result;
use bitlens_codec::read::{ReadStream, TraceStream};
use bitlens_yojimbo::config::{
    MAX_BLOCK_SIZE, MAX_CHANNELS, MAX_MESSAGE_TYPES, MAX_MESSAGES_PER_PACKET, MAX_PACKET_FRAGMENTS,
    MAX_PACKET_SIZE,
};
use bitlens_yojimbo::{
    BodyReader, ChannelConfig, ChannelType, Config, MessageType, NoBody, ReliableConfig,
};
use toml::de::{DeTable, DeValue};

use crate::defs::StructDef;
use crate::source::{Parser, Val, get};
use crate::{DynValue, Schema, SchemaError};

/// The largest reliable.io `fragment_size` (`packetFragmentSize`) a section may give: the one
/// [`Config::validate`] accepts.
const MAX_FRAGMENT_SIZE: u32 = 65_536;

/// A `[yojimbo]` section as loaded and checked: everything of a [`Config`] but the body readers,
/// which [`config`] builds over the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// reliable.io's receive limits (`max_packet_size`, `fragment_size`, `max_fragments`).
    pub reliable: ReliableConfig,
    /// The channels, by index.
    pub channels: Vec<ChannelConfig>,
    /// The message factory's types, by number.
    pub messages: Vec<MessageDef>,
}

/// One message type of a `[yojimbo]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDef {
    /// Its name.
    pub name: String,
    /// A block message (its messages carry a block after the body).
    pub block: bool,
    /// The struct its body is (`None`: a message of no bits, `body = false`).
    pub body: Option<String>,
}

/// The framing parameters of a schema without a `[protocol]` section: no packet types (every
/// packet read is refused), named after the layer it describes.
pub(crate) fn no_protocol() -> bitlens_codec::packet::Protocol {
    bitlens_codec::packet::Protocol {
        name: "yojimbo".to_owned(),
        id: bitlens_codec::packet::ProtocolId::U32(0),
        packet_types: Vec::new(),
        mtu: 0,
    }
}

/// The `[yojimbo]` section of `schema`, when it has one.
pub fn section(schema: &Schema) -> Option<&Section> {
    schema.yojimbo.as_ref()
}

/// The yojimbo layer's configuration from `schema`'s `[yojimbo]` section (`None` when it has
/// none): its reliable.io limits and channels as written, and per message type a
/// [`BodyReader`] that reads the body struct through the schema interpreter (on a traced read,
/// every field of the body, named as the struct names it, under the message's `body` scope), or
/// reads nothing for a type with `body = false`.
///
/// The loader checked every setting against the yojimbo crate's limits, so the configuration
/// passes [`Config::validate`].
pub fn config(schema: &Arc<Schema>) -> Option<Arc<Config>> {
    let s = schema.yojimbo.as_ref()?;
    let message_types = s
        .messages
        .iter()
        .map(|m| {
            let body: Arc<dyn BodyReader> = match &m.body {
                Some(name) => Arc::new(SchemaBody {
                    schema: schema.clone(),
                    name: name.clone(),
                }),
                None => Arc::new(NoBody),
            };
            MessageType::new(&m.name, m.block, body)
        })
        .collect();
    Some(Arc::new(Config {
        reliable: s.reliable,
        channels: s.channels.clone(),
        message_types,
    }))
}

/// A message body that is a schema struct: its fields read through the schema interpreter, at
/// the top of the message's body scope.
struct SchemaBody {
    schema: Arc<Schema>,
    name: String,
}

impl BodyReader for SchemaBody {
    fn read(&self, s: &mut ReadStream<'_>) -> Result<()> {
        self.schema
            .serialize_struct(s, &self.name, &DynValue::Null)
            .map(|_| ())
    }

    fn trace(&self, s: &mut TraceStream<'_>) -> Result<()> {
        self.schema
            .serialize_struct(s, &self.name, &DynValue::Null)
            .map(|_| ())
    }
}

const KEYS: &[&str] = &[
    "max_packet_size",
    "fragment_size",
    "max_fragments",
    "channels",
    "messages",
    "doc",
];

const CHANNEL_KEYS: &[&str] = &[
    "type",
    "max_messages_per_packet",
    "max_block_size",
    "block_fragment_size",
    "disable_blocks",
    "doc",
];

const MESSAGE_KEYS: &[&str] = &["name", "body", "block", "doc"];

/// Refuses a key of `t` not in `keys`; `what` names the table in the message.
fn known_keys(
    p: &Parser<'_>,
    t: &DeTable<'_>,
    keys: &[&str],
    what: &str,
) -> Result<(), SchemaError> {
    for (k, _) in t.iter() {
        if !keys.contains(&k.get_ref().as_ref()) {
            return Err(p.err(
                &k.span(),
                format!(
                    "unknown key \"{}\" in {what} (expected one of {})",
                    k.get_ref(),
                    keys.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The integer `key` of `t` (`default` when absent), refused outside `lo..=hi`; `what` names
/// it in the message and `why` says where the bound comes from.
fn ranged(
    p: &Parser<'_>,
    t: &DeTable<'_>,
    key: &str,
    what: &str,
    default: u32,
    (lo, hi): (u32, u32),
    why: &str,
) -> Result<u32, SchemaError> {
    let Some(v) = get(t, key) else {
        return Ok(default);
    };
    let n = p.int(v, what)?;
    match u32::try_from(n) {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(p.err(
            &v.span(),
            format!("{what} = {n} is not within {lo}..={hi} ({why})"),
        )),
    }
}

fn boolean(p: &Parser<'_>, t: &DeTable<'_>, key: &str, what: &str) -> Result<bool, SchemaError> {
    match get(t, key) {
        None => Ok(false),
        Some(v) => v.get_ref().as_bool().ok_or_else(|| {
            p.err(
                &v.span(),
                format!("{what} must be true or false (write `true` or `false`, without quotes)"),
            )
        }),
    }
}

/// Parses and checks a `[yojimbo]` section; `structs` are the schema's resolved structs and
/// `struct_ids` their indices by name (message bodies name them).
pub(crate) fn parse(
    p: &Parser<'_>,
    v: &Val<'_>,
    struct_ids: &HashMap<String, usize>,
    structs: &[StructDef],
) -> Result<Section, SchemaError> {
    let t = p.table(v, "[yojimbo]")?;
    known_keys(p, t, KEYS, "[yojimbo]")?;
    let reliable = reliable(p, t, &v.span())?;
    let channels = match get(t, "channels") {
        None => vec![ChannelConfig::new(ChannelType::ReliableOrdered); 2],
        Some(list) => channel_list(p, list)?,
    };
    let messages_v = get(t, "messages").ok_or_else(|| {
        p.err(
            &v.span(),
            "[yojimbo] has no `messages` (list the message factory's types, type 0 first: `messages = [\"Chat\", { name = \"Ping\", body = false }]`)",
        )
    })?;
    let messages = message_list(p, messages_v, struct_ids, structs)?;
    Ok(Section {
        reliable,
        channels,
        messages,
    })
}

/// reliable.io's settings, with yojimbo's `ClientServerConfig` defaults.
fn reliable(
    p: &Parser<'_>,
    t: &DeTable<'_>,
    span: &Range<usize>,
) -> Result<ReliableConfig, SchemaError> {
    let d = ReliableConfig::default();
    let max_packet_size = ranged(
        p,
        t,
        "max_packet_size",
        "[yojimbo] max_packet_size",
        d.max_packet_size,
        (1, MAX_PACKET_SIZE),
        "bitlens reassembles connection packets of at most 1 MiB",
    )?;
    let fragment_size = ranged(
        p,
        t,
        "fragment_size",
        "[yojimbo] fragment_size",
        d.fragment_size,
        (1, MAX_FRAGMENT_SIZE),
        "reliable.io's packetFragmentSize, at most 64 KiB",
    )?;
    let max_fragments = ranged(
        p,
        t,
        "max_fragments",
        "[yojimbo] max_fragments",
        d.max_fragments,
        (1, MAX_PACKET_FRAGMENTS),
        "reliable.io sends the fragment count in one byte",
    )?;
    // yojimbo's ClientServerConfig::Validate: the fragments must hold the largest packet
    // (maxPacketFragments is computed from the default maxPacketSize, so a larger packet size
    // needs it set too).
    let needed = max_packet_size.div_ceil(fragment_size);
    if max_fragments < needed {
        let at = get(t, "max_fragments").map_or(span.clone(), |v| v.span());
        return Err(p.err(
            &at,
            format!(
                "[yojimbo] max_fragments = {max_fragments} cannot hold a packet of max_packet_size = {max_packet_size} in fragments of {fragment_size} bytes (yojimbo's ClientServerConfig::Validate refuses it: set max_fragments = {needed})"
            ),
        ));
    }
    Ok(ReliableConfig {
        max_packet_size,
        fragment_size,
        max_fragments,
    })
}

/// The `channels` list: per channel its type and limits, with yojimbo's `ChannelConfig`
/// defaults.
fn channel_list(p: &Parser<'_>, list_v: &Val<'_>) -> Result<Vec<ChannelConfig>, SchemaError> {
    let list = p.array(
        list_v,
        "[yojimbo] channels must be an array of tables (`channels = [{ type = \"reliable_ordered\" }]`)",
    )?;
    if list.is_empty() || list.len() > MAX_CHANNELS {
        return Err(p.err(
            &list_v.span(),
            format!(
                "[yojimbo] has {} channels, not within 1..={MAX_CHANNELS} (yojimbo's MaxChannels)",
                list.len()
            ),
        ));
    }
    let mut channels = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let what = format!("[yojimbo] channel {i}");
        let t = p.table(c, &what)?;
        known_keys(p, t, CHANNEL_KEYS, &what)?;
        let kind = match get(t, "type") {
            None => ChannelType::ReliableOrdered,
            Some(v) => match p.string(v, &format!("{what} type"))?.get_ref().as_str() {
                "reliable_ordered" => ChannelType::ReliableOrdered,
                "unreliable_unordered" => ChannelType::UnreliableUnordered,
                other => {
                    return Err(p.err(
                        &v.span(),
                        format!(
                            "{what} type {} is not a yojimbo channel type (use \"reliable_ordered\" or \"unreliable_unordered\")",
                            crate::names::shown(other)
                        ),
                    ));
                }
            },
        };
        let d = ChannelConfig::new(kind);
        let key = |k: &str| format!("{what} {k}");
        let max_messages_per_packet = ranged(
            p,
            t,
            "max_messages_per_packet",
            &key("max_messages_per_packet"),
            d.max_messages_per_packet,
            (1, MAX_MESSAGES_PER_PACKET),
            "bitlens-yojimbo's limit on the messages one entry may claim",
        )?;
        let max_block_size = ranged(
            p,
            t,
            "max_block_size",
            &key("max_block_size"),
            d.max_block_size,
            (1, MAX_BLOCK_SIZE),
            "bitlens-yojimbo reassembles blocks of at most 16 MiB",
        )?;
        let block_fragment_size = ranged(
            p,
            t,
            "block_fragment_size",
            &key("block_fragment_size"),
            d.block_fragment_size,
            (1, max_block_size),
            "a block fragment is at most the channel's max_block_size",
        )?;
        let disable_blocks = boolean(p, t, "disable_blocks", &key("disable_blocks"))?;
        channels.push(ChannelConfig {
            kind,
            max_messages_per_packet,
            max_block_size,
            block_fragment_size,
            disable_blocks,
        });
    }
    Ok(channels)
}

/// The `messages` list: per message type (by number) its name, body struct and block flag.
fn message_list(
    p: &Parser<'_>,
    list_v: &Val<'_>,
    struct_ids: &HashMap<String, usize>,
    structs: &[StructDef],
) -> Result<Vec<MessageDef>, SchemaError> {
    let list = p.array(
        list_v,
        "[yojimbo] messages must be an array of struct names or tables (type 0 first)",
    )?;
    if list.is_empty() || list.len() > MAX_MESSAGE_TYPES {
        return Err(p.err(
            &list_v.span(),
            format!(
                "[yojimbo] has {} message types, not within 1..={MAX_MESSAGE_TYPES} (list at least one; the type is sent in at most 16 bits)",
                list.len()
            ),
        ));
    }
    let mut messages = Vec::with_capacity(list.len());
    let mut names: HashSet<String> = HashSet::with_capacity(list.len());
    for entry in list.iter() {
        let m = message(p, entry, struct_ids, structs)?;
        crate::work::step();
        if !names.insert(m.name.clone()) {
            return Err(p.err(
                &entry.span(),
                format!(
                    "duplicate message type name \"{}\" in [yojimbo] (each message type needs its own name)",
                    m.name
                ),
            ));
        }
        messages.push(m);
    }
    Ok(messages)
}

/// One entry of `messages`: `"Name"` (body = struct Name) or `{ name, body, block }`.
fn message(
    p: &Parser<'_>,
    entry: &Val<'_>,
    struct_ids: &HashMap<String, usize>,
    structs: &[StructDef],
) -> Result<MessageDef, SchemaError> {
    let (name, body_v, block) = match entry.get_ref() {
        DeValue::String(_) => (p.string(entry, "message type")?, None, false),
        DeValue::Table(t) => {
            known_keys(p, t, MESSAGE_KEYS, "a [yojimbo] message type")?;
            let n = get(t, "name").ok_or_else(|| {
                p.err(
                    &entry.span(),
                    "[yojimbo] message type has no name (add `name = \"...\"`)",
                )
            })?;
            let block = boolean(p, t, "block", "[yojimbo] message type block")?;
            (p.string(n, "message type name")?, get(t, "body"), block)
        }
        _ => {
            return Err(p.err(
                &entry.span(),
                "a [yojimbo] message type is neither a struct name nor a table (write `\"Name\"` or `{ name = \"...\", body = \"Struct\", block = true }`)",
            ));
        }
    };
    p.name(&name.span(), name.get_ref(), "message type name")?;
    // The body: a struct name, `false` for none, or by default the struct of the same name.
    let body = match body_v.map(|v| (v, v.get_ref())) {
        Some((_, DeValue::Boolean(false))) => None,
        Some((v, DeValue::String(_))) => Some(p.string(v, "message body")?),
        Some((v, _)) => {
            return Err(p.err(
                &v.span(),
                "a message body is a struct name or false (write `body = \"Struct\"`, or `body = false` for a message of no bits)",
            ));
        }
        None => Some(name.clone()),
    };
    let Some(body) = body else {
        return Ok(MessageDef {
            name: name.into_inner(),
            block,
            body: None,
        });
    };
    let Some(&sid) = struct_ids.get(body.get_ref()) else {
        return Err(p.err(
            &body.span(),
            format!(
                "message type \"{}\": body \"{}\" is not a struct defined in this file (add [struct.{}], name another with `body = \"...\"`, or write `body = false` for a message of no bits)",
                name.get_ref(),
                body.get_ref(),
                body.get_ref()
            ),
        ));
    };
    p.no_end_in_body(
        structs[sid].end_at.as_ref(),
        &body.span(),
        &format!("message type \"{}\"", name.get_ref()),
        "a message body is followed by the rest of the connection packet, so `end` would refuse every message (remove this field)",
    )?;
    Ok(MessageDef {
        name: name.into_inner(),
        block,
        body: Some(body.into_inner()),
    })
}
