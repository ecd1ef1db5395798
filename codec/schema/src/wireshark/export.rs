//! The whole dissector: the runtime's Lua files and the generated code of both layers, in the
//! order Wireshark loads them.

use super::batch;
use super::lua::{WiresharkError, proto_name};
use super::packet;
use crate::schema::Schema;
use std::fmt::Write as _;

const COMMON_LUA: &str = include_str!("common.lua");
const PACKET_LUA: &str = include_str!("packet.lua");
const BATCH_LUA: &str = include_str!("batch.lua");
/// How the exported dissector finds its datagrams, and what it is called.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WiresharkOptions {
    /// UDP ports of the bit-packed packets; none: a heuristic dissector that claims a datagram
    /// when its CRC (with the protocol id folded in) holds.
    pub ports: Vec<u16>,
    /// UDP ports of the message batches (a schema with a `[batch]` section); none: a heuristic
    /// dissector that claims a datagram whose batch and message lengths add up exactly.
    pub batch_ports: Vec<u16>,
    /// The protocol's filter name; default: the schema's protocol name (the loader checked
    /// that Wireshark accepts it: SCHEMA.md, "Names"). A name given here passes the same rule.
    pub name: Option<String>,
}
impl Schema {
    /// Writes a Lua dissector for Wireshark 4.x that decodes this schema's packets (and its
    /// `[batch]` messages), field by field, with the verdicts of `bitlens decode`.
    ///
    /// # Errors
    /// A protocol name Wireshark cannot use as a filter name, a schema with more than
    /// [`MAX_FIELDS`] distinct field paths, a schema without a `[protocol]` section (a yojimbo
    /// game's: Lua cannot decrypt netcode), or a `bit_run` picked by a field wider than a Lua
    /// number holds exactly.
    pub fn wireshark_lua(&self, options: &WiresharkOptions) -> Result<String, WiresharkError> {
        if !self.has_protocol() {
            return Err(WiresharkError("the schema has no [protocol] section, so no packets to export (its [yojimbo] section describes traffic inside netcode's encryption, which a Wireshark Lua dissector cannot decrypt: read it with `bitlens decode`)".into()));
        }
        let name = match &options.name {
            Some(n) => {
                // The rule the schema's own protocol name passed when it loaded.
                if let Some(why) = crate::names::protocol(n, self.batch.is_some()) {
                    return Err(WiresharkError(format!(
                        "protocol name {} {why}",
                        crate::names::shown(n)
                    )));
                }
                n.clone()
            }
            None => proto_name(&self.protocol.name),
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "-- Wireshark dissector for the {:?} protocol, written by `bitlens export-wireshark` \
             from its schema.",
            self.protocol.name
        );
        out.push_str(
            "-- Load it with `tshark -X lua_script:THIS.lua` or copy it into Wireshark's personal \
             Lua plugins folder.\n\
             -- Fields are filterable by path (array indices left out); each item shows its bit \
             offset and width.\n\
             -- Generated code: edit the schema and export again rather than this file.\n\n",
        );
        let packets = packet::generate(self, &name, &options.ports)?;
        let batch = match &self.batch {
            Some(b) => Some(batch::generate(b, &name, &options.batch_ports)?),
            None => None,
        };
        out.push_str(COMMON_LUA);
        out.push_str(&packets.prelude);
        out.push_str(PACKET_LUA);
        out.push_str(&packets.code);
        if let Some(b) = batch {
            out.push_str("\ndo\n");
            out.push_str(&b.prelude);
            out.push_str(BATCH_LUA);
            out.push_str(&b.code);
            out.push_str("end\n");
        }
        Ok(out)
    }
}
