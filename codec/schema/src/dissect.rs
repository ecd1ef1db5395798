//! Schemas as dissectors, the interface every tool reads a protocol through
//! ([`bitlens_codec::dissect`]): [`SchemaDissector`] reads a schema's framed packets (the
//! inspector's `schema`), and [`SchemaBatch`] is a schema's `[batch]` section as a message set,
//! which [`batch_dissector`] wraps into the inspector's `schema-batch`.
//!
//! Both run the schema interpreter, which calls the very primitives a hand-written serialize
//! function calls: a schema that describes a compiled protocol dissects its datagrams exactly as
//! the compiled dissector does (the `schema_vs_compiled` fuzz targets check it).
//!
//! ```
//! use bitlens_codec::dissect::{Dissector, Status};
//! use bitlens_schema::Schema;
//! use bitlens_schema::dissect::SchemaDissector;
//! use std::sync::Arc;
//!
//! let text = r#"
//!     [protocol]
//!     name = "tiny"
//!     id = 0x1234
//!     mtu = 1200
//!     packets = ["Hello"]
//!
//!     [struct.Hello]
//!     fields = [{ name = "health", type = "int", min = 0, max = 100 }]
//! "#;
//! let schema = Arc::new(Schema::from_toml(text, "tiny.toml")?);
//! let value = schema.value_from_json("Hello", &serde_json::json!({"health": 73}))?;
//! let mut buf = [0u8; 64];
//! let n = schema.write("Hello", &value, &mut buf)?;
//!
//! let d = SchemaDissector::new(schema);
//! assert_eq!(d.verdict(&buf[..n]).packet_type, Some("Hello"));
//! assert_eq!(d.dissect(&buf[..n]).status, Status::Ok);
//! assert_eq!(d.schema_text().as_deref(), Some(text));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::batch::schema::BatchSchema;
use crate::schema::Schema;
use bitlens_batch::dissect::{BatchDissector, MessageSet};
use bitlens_batch::message::RawMessage;
use bitlens_codec::dissect::{Dissection, Dissector, Layout, Verdict, intern};
use bitlens_codec::packet::{Protocol, ProtocolId, seal_crc};
use bitlens_codec::trace::Tracer;
use std::sync::Arc;

/// The dissector of a schema's framed packets.
#[derive(Debug, Clone)]
pub struct SchemaDissector {
    name: String,
    schema: Arc<Schema>,
    /// The packet type names, interned.
    types: Vec<&'static str>,
}

impl SchemaDissector {
    /// The dissector of `schema`'s packets, named `schema` (`--decode PORT=schema`).
    pub fn new(schema: Arc<Schema>) -> Self {
        Self::named("schema", schema)
    }

    /// The dissector of `schema`'s packets, named `name`.
    pub fn named(name: impl Into<String>, schema: Arc<Schema>) -> Self {
        let types = schema
            .protocol()
            .packet_types
            .iter()
            .map(|t| intern(t))
            .collect();
        SchemaDissector {
            name: name.into(),
            schema,
            types,
        }
    }

    /// The schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn type_name(&self, seen: Option<u32>) -> Option<&'static str> {
        self.types.get(usize::try_from(seen?).ok()?).copied()
    }
}

impl Dissector for SchemaDissector {
    fn name(&self) -> &str {
        &self.name
    }

    fn layout(&self) -> Layout {
        Layout::Packets
    }

    fn verdict(&self, payload: &[u8]) -> Verdict<'_> {
        let (seen, result) = self.schema.verdict(payload);
        Verdict::of_read(self.type_name(seen), result)
    }

    fn dissect(&self, payload: &[u8]) -> Dissection {
        let (seen, trace) = self.schema.trace(payload);
        Dissection::of_trace(self.type_name(seen), trace, payload)
    }

    fn protocol(&self) -> Option<&Protocol> {
        Some(self.schema.protocol())
    }

    fn with_protocol_id(&self, id: ProtocolId) -> Option<Arc<dyn Dissector>> {
        let schema = Arc::new(self.schema.with_protocol_id(id));
        Some(Arc::new(SchemaDissector::named(self.name.clone(), schema)))
    }

    fn seal(&self, datagram: &mut [u8]) -> bool {
        seal_crc(self.schema.protocol().id, datagram)
    }

    fn schema_text(&self) -> Option<String> {
        Some(self.schema.source().to_owned())
    }
}

/// A schema's `[batch]` section as a message set, keeping its schema alive.
#[derive(Debug, Clone)]
pub struct SchemaBatch(Arc<Schema>);

impl SchemaBatch {
    /// The message set of `schema`'s `[batch]` section; `None` when it has none.
    pub fn new(schema: Arc<Schema>) -> Option<Self> {
        schema.batch().is_some().then_some(SchemaBatch(schema))
    }

    /// The section. (Present by construction; an empty set would list every type as unknown.)
    fn section(&self) -> Option<&BatchSchema> {
        self.0.batch()
    }
}

impl MessageSet for SchemaBatch {
    fn message_name(&self, message_type: u8) -> Option<&'static str> {
        self.section()?.message_name(message_type)
    }

    fn stage_name(&self, stage: u8) -> Option<&'static str> {
        match self.section() {
            Some(b) => b.stage_name(stage),
            None => bitlens_batch::UpdateStage(stage).name(),
        }
    }

    fn read_body<T: Tracer>(
        &self,
        raw: &RawMessage<'_>,
        tracer: T,
    ) -> (bitlens_batch::Result<()>, T) {
        match self.section() {
            Some(b) => b.read_body(raw, tracer),
            None => (Ok(()), tracer),
        }
    }

    fn schema_text(&self) -> Option<String> {
        Some(self.0.source().to_owned())
    }
}

/// The dissector of a schema's batches, named `schema-batch` (`--decode PORT=schema-batch`);
/// `None` for a schema without a `[batch]` section.
pub fn batch_dissector(schema: Arc<Schema>) -> Option<BatchDissector<SchemaBatch>> {
    SchemaBatch::new(schema).map(|set| BatchDissector::new("schema-batch", set))
}
