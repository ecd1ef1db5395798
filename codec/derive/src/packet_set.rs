//! `#[derive(PacketSet)]`: a packet enum's `Packet` impl (protocol, type numbers, empty packets,
//! bodies) and its whole protocol in the schema language.

use crate::attrs::{ContainerAttrs, VariantAttrs};
use crate::bitpacked::{VariantBody, toml_str, variant_body, variant_wire, wildcards};
use crate::fields::{Ctx, int_lit};
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput};

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let attrs = ContainerAttrs::parse(&input.attrs, true)?;
    let k = attrs.krate.clone();
    let Data::Enum(e) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "#[derive(PacketSet)] takes the enum of a protocol's packets (one variant per packet type)",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "a packet set has one protocol: it cannot be generic",
        ));
    }
    if e.variants.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "a packet set needs at least one packet type",
        ));
    }
    let (protocol, id_code, mtu) = protocol_of(input, &attrs)?;
    let name = &input.ident;
    let mut ctx = Ctx::new(&k, true);
    let (bodies, wires) = packet_bodies(&mut ctx, name, e)?;
    let n = e.variants.len() as u32;
    let numbers: Vec<u32> = (0..n).collect();
    let wild = wildcards(name, e);
    let patterns: Vec<&TokenStream> = bodies.iter().map(|b| &b.pattern).collect();
    let defaults: Vec<&TokenStream> = bodies.iter().map(|b| &b.default).collect();
    let serializes: Vec<&TokenStream> = bodies.iter().map(|b| &b.serialize).collect();
    let schema_bodies: Vec<&TokenStream> = bodies.iter().map(|b| &b.schema_body).collect();
    let items = &ctx.items;
    let proto_name = protocol.value();
    let proto_text = toml_str(&proto_name);
    let packet_set = packet_set_impl(&k, name, &proto_text, &wires, &schema_bodies);
    Ok(quote! {
        // The generated code casts literals and repeats checks a person would not write.
        #[allow(clippy::all)]
        const _: () = {
            #(#items)*

            static PROTOCOL: ::std::sync::LazyLock<#k::Protocol> =
                ::std::sync::LazyLock::new(|| #k::Protocol {
                    name: ::std::string::String::from(#protocol),
                    id: #id_code,
                    packet_types: ::std::vec![#(::std::string::String::from(#wires)),*],
                    mtu: (#mtu) as usize,
                });

            impl #k::Packet for #name {
                fn protocol() -> &'static #k::Protocol {
                    &PROTOCOL
                }

                fn packet_type(&self) -> u32 {
                    match self {
                        #(#wild => #numbers,)*
                    }
                }

                fn empty(t: u32) -> ::core::option::Option<Self> {
                    ::core::option::Option::Some(match t {
                        #(#numbers => #defaults,)*
                        _ => return ::core::option::Option::None,
                    })
                }

                fn serialize_body<S: #k::Stream>(&mut self, s: &mut S) -> #k::Result<()> {
                    match self {
                        #(#patterns => { #serializes })*
                    }
                    ::core::result::Result::Ok(())
                }

                fn schema_text() -> ::core::option::Option<::std::string::String> {
                    ::core::option::Option::Some(<#name as #k::PacketSet>::schema())
                }
            }

            #packet_set
        };
    })
}

/// The protocol's name, its id as a `ProtocolId` expression, and its MTU, from the enum's
/// attributes.
fn protocol_of(
    input: &DeriveInput,
    attrs: &ContainerAttrs,
) -> syn::Result<(syn::LitStr, TokenStream, syn::Expr)> {
    let k = &attrs.krate;
    let missing = |key: &str, hint: &str| {
        syn::Error::new(
            input.ident.span(),
            format!("a packet set needs `{key}`: add `#[bitlens({key} = {hint})]`"),
        )
    };
    let protocol = attrs
        .protocol
        .clone()
        .ok_or_else(|| missing("protocol", "\"my-game\""))?;
    let id = attrs
        .id
        .clone()
        .ok_or_else(|| missing("id", "0x12345678"))?;
    let mtu = attrs.mtu.clone().ok_or_else(|| missing("mtu", "1200"))?;
    if let Some(m) = int_lit(&mtu)
        && m < 5
    {
        return Err(syn::Error::new(
            mtu.span(),
            format!("mtu {m} cannot hold a packet (use at least 5 bytes; 1200 is usual)"),
        ));
    }
    let id_code = match (int_lit(&id), attrs.id_bits) {
        (Some(v), Some((64, _))) => {
            let v = u64::try_from(v)
                .map_err(|_| syn::Error::new(id.span(), "a 64-bit protocol id is 0 to 2^64 - 1"))?;
            quote!(#k::ProtocolId::U64(#v))
        }
        (Some(v), _) => {
            let v = u32::try_from(v).map_err(|_| {
                syn::Error::new(
                    id.span(),
                    format!("protocol id {v:#x} does not fit 32 bits (add `id_bits = 64`, or use a smaller id)"),
                )
            })?;
            quote!(#k::ProtocolId::U32(#v))
        }
        (None, Some((_, s))) => {
            return Err(syn::Error::new(
                s,
                "`id_bits` goes with an integer literal id; a constant id is a ProtocolId already",
            ));
        }
        (None, None) => quote!(#k::ProtocolId::from(#id)),
    };
    Ok((protocol, id_code, mtu))
}

/// Each variant's body and wire name, in declaration order (the packet type numbers).
fn packet_bodies(
    ctx: &mut Ctx<'_>,
    name: &syn::Ident,
    e: &syn::DataEnum,
) -> syn::Result<(Vec<VariantBody>, Vec<String>)> {
    let mut bodies = Vec::new();
    let mut wires: Vec<String> = Vec::new();
    for v in &e.variants {
        if let Some((_, d)) = &v.discriminant {
            return Err(syn::Error::new(
                d.span(),
                "packet types are numbered in declaration order from 0: remove the explicit number",
            ));
        }
        let va = VariantAttrs::parse(&v.attrs)?;
        let wire = variant_wire(v, &va, &wires, "packet types")?;
        let body = variant_body(ctx, name, v, &va, &wire)?;
        wires.push(wire);
        bodies.push(body);
    }
    Ok((bodies, wires))
}

/// `PacketSet::schema`: the `[protocol]` table, then every type its packets' bodies define.
fn packet_set_impl(
    k: &syn::Path,
    name: &syn::Ident,
    proto_text: &str,
    wires: &[String],
    schema_bodies: &[&TokenStream],
) -> TokenStream {
    let p = quote!(#k::packed);
    quote! {
    impl #k::PacketSet for #name {
        fn schema() -> ::std::string::String {
            let protocol = <#name as #k::Packet>::protocol();
            let mut w = #p::SchemaWriter::new();
            let w = &mut w;
            let mut packets = ::std::string::String::new();
            #(
                let body: ::core::option::Option<::std::string::String> = #schema_bodies;
                let body: ::std::string::String = match body {
                    ::core::option::Option::Some(body) => body,
                    ::core::option::Option::None => w.synthesize(#wires, |_, name| {
                        #p::struct_text(name, &[])
                    }),
                };
                if body == #wires {
                    packets.push_str(&::std::format!("  {},\n", #p::toml_str(#wires)));
                } else {
                    packets.push_str(&::std::format!(
                        "  {{ name = {}, body = {} }},\n",
                        #p::toml_str(#wires),
                        #p::toml_str(&body)
                    ));
                }
            )*
            // TOML integers are i64: a 64-bit id above i64::MAX is written as the i64 of
            // its bits, as the schema reads it back.
            let (id, id_bits) = match protocol.id {
                #k::ProtocolId::U32(v) => (::std::format!("{:#x}", v), 32),
                #k::ProtocolId::U64(v) if v > i64::MAX as u64 => (::std::format!("{}", v as i64), 64),
                #k::ProtocolId::U64(v) => (::std::format!("{:#x}", v), 64),
            };
            let mut text = ::std::format!(
                "[protocol]\nname = {}\nid = {}\nid_bits = {}\nmtu = {}\npackets = [\n{}]\n",
                #proto_text,
                id,
                id_bits,
                protocol.mtu,
                packets
            );
            let defs = ::core::mem::take(w).finish();
            if !defs.is_empty() {
                text.push('\n');
                text.push_str(&defs);
            }
            text
        }
    }
    }
}
