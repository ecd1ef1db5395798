//! `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]` expanded: a struct's
//! `BatchStruct` (and `MessageBody`) impl from its fields, a message enum's `MessageEnum` impl.

use super::attrs::{Container, container};
use super::body::generate;
use super::fields::{Kind, kind_of};
use crate::attrs::FieldAttrs;
use crate::forms::Ns;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr};

pub fn expand_struct(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs, false)?;
    let k = &c.krate;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[derive(BatchStruct)] takes structs without generic parameters",
        ));
    }
    let fields = named_fields(input)?;
    let ident = &input.ident;
    let type_name = struct_name(&c, ident)?;
    let StructFields {
        serialize,
        mins,
        maxes,
        plain,
        schema,
        asserts,
    } = struct_fields(k, &fields)?;
    if let (Some(span), None) = (c.exact_size, &c.message_type) {
        return Err(syn::Error::new(
            span,
            "`exact_size` is a message's size bound: it goes with `message_type = N`",
        ));
    }
    let message = message_impl(&c, ident, &type_name);
    let max_body = message.as_ref().filter(|_| c.exact_size.is_none()).map(|_| {
        quote! {
            assert!(
                <#ident as #k::BatchStruct>::MAX_BYTES <= #k::structs::MAX_BODY,
                "a message's fields may take more than the largest body (65529 bytes): lower a max_len"
            );
        }
    });
    Ok(quote! {
        // The generated code casts bounds and repeats checks a person would not write.
        #[allow(clippy::all)]
        const _: () = {
            impl #k::BatchStruct for #ident {
                const STRUCT_NAME: &'static str = #type_name;
                const MIN_BYTES: usize = 0 #(+ #mins)*;
                const MAX_BYTES: usize = 0 #(+ #maxes)*;
                const PLAIN: bool = true #(&& #plain)*;

                #[inline]
                fn serialize_fields<S: #k::ByteStream>(&mut self, s: &mut S) -> #k::Result<()> {
                    #(#serialize)*
                    ::core::result::Result::Ok(())
                }

                fn define(w: &mut #k::SchemaWriter) {
                    // Always built: `define` checks that no other struct has this name.
                    let fields: ::std::vec::Vec<::std::string::String> = ::std::vec![#(#schema),*];
                    w.define(#type_name, &fields);
                }
            }
            #message
            const _: () = {
                #(#asserts)*
                #max_body
            };
        };
    })
}

/// The named fields of a batch struct.
fn named_fields(input: &DeriveInput) -> syn::Result<Vec<&syn::Field>> {
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) => Ok(n.named.iter().collect()),
            Fields::Unit => Ok(Vec::new()),
            Fields::Unnamed(u) => Err(syn::Error::new(
                u.span(),
                "a batch struct's fields need names (they name the trace and the schema)",
            )),
        },
        _ => Err(syn::Error::new(
            input.ident.span(),
            "#[derive(BatchStruct)] takes structs; the enum of a protocol's messages takes \
             #[derive(MessageEnum)]",
        )),
    }
}

/// The struct's name in the schema: a TOML table key (`[batch.struct.NAME]`).
fn struct_name(c: &Container, ident: &Ident) -> syn::Result<String> {
    let type_name = c
        .name
        .as_ref()
        .map_or_else(|| ident.unraw().to_string(), LitStr::value);
    let plain_name = type_name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && type_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain_name {
        let span = c.name.as_ref().map_or(ident.span(), LitStr::span);
        return Err(syn::Error::new(
            span,
            format!(
                "\"{type_name}\" cannot name a batch struct: use letters, digits and `_`, not starting with a digit"
            ),
        ));
    }
    Ok(type_name)
}

/// `MessageBody` for a struct with `message_type = N`.
fn message_impl(c: &Container, ident: &Ident, type_name: &str) -> Option<TokenStream> {
    let k = &c.krate;
    let size_upper_bound = match c.exact_size {
        Some(_) => quote!(#k::structs::exact_size(self)),
        None => quote!(<Self as #k::BatchStruct>::MAX_BYTES),
    };
    c.message_type.as_ref().map(|t| {
        quote! {
            impl #k::MessageBody for #ident {
                const TYPE: u8 = #t;
                const NAME: &'static str = #type_name;

                #[inline]
                fn size_upper_bound(&self) -> usize {
                    #size_upper_bound
                }

                #[inline]
                fn serialize<S: #k::ByteStream>(&mut self, s: &mut S) -> #k::Result<()> {
                    <Self as #k::BatchStruct>::serialize_fields(self, s)
                }
            }
        }
    })
}

/// The generated parts of a batch struct's fields, one entry a field.
struct StructFields {
    serialize: Vec<TokenStream>,
    mins: Vec<TokenStream>,
    maxes: Vec<TokenStream>,
    plain: Vec<TokenStream>,
    schema: Vec<TokenStream>,
    asserts: Vec<TokenStream>,
}

fn struct_fields(k: &syn::Path, fields: &[&syn::Field]) -> syn::Result<StructFields> {
    let mut out = StructFields {
        serialize: Vec::new(),
        mins: Vec::new(),
        maxes: Vec::new(),
        plain: Vec::new(),
        schema: Vec::new(),
        asserts: Vec::new(),
    };
    // Earlier fields: (ident, wire name, is an unguarded bool).
    let mut earlier: Vec<(Ident, String, bool)> = Vec::new();
    let st_toml = quote!(#k::structs::toml_str);
    for f in fields {
        let Some(id) = f.ident.clone() else { continue };
        let a = FieldAttrs::parse(&f.attrs, Ns::Batch)?;
        let wire = a
            .name
            .as_ref()
            .map_or_else(|| id.unraw().to_string(), LitStr::value);
        if let Some(span) = a.skip {
            if a.keys.len() > 1 {
                return Err(syn::Error::new(
                    span,
                    "a skipped field takes no other attribute",
                ));
            }
            out.serialize.push(quote! {
                if S::READING { self.#id = ::core::default::Default::default(); }
            });
            continue;
        }
        if earlier.iter().any(|(_, w, _)| *w == wire) {
            let span = a.name.as_ref().map_or(id.span(), LitStr::span);
            return Err(syn::Error::new(
                span,
                format!(
                    "two fields have the wire name \"{wire}\" (rename one with `name = \"...\"`)"
                ),
            ));
        }
        let kind = kind_of(&f.ty, &a, f.ty.span())?;
        let place = quote!(self.#id);
        let name = quote!(#wire);
        let g = generate(k, &kind, &f.ty, &place, &name, &name);
        let (ser, min, max, fixed, text) = (g.serialize, g.min, g.max, g.plain, g.schema);
        // A failed assertion points at the field.
        out.asserts.push(respan(g.asserts, f.ty.span()));
        match &a.guard {
            None => {
                out.serialize.push(quote!({ #ser }));
                out.mins.push(min);
                out.schema.push(quote!(
                    ::std::format!("{{ name = {}, {} }}", #st_toml(#wire), #text)
                ));
                out.plain.push(fixed);
            }
            Some((flag, when, _)) => {
                let Some((_, flag_wire, _)) =
                    earlier.iter().find(|(f, _, is_bool)| f == flag && *is_bool)
                else {
                    return Err(syn::Error::new(
                        flag.span(),
                        format!(
                            "`{flag}` is not an earlier bool field that is always present: a \
                             guard names one"
                        ),
                    ));
                };
                out.serialize
                    .push(guarded(k, &id, &f.ty, &wire, (flag, *when), &ser));
                out.mins.push(quote!(0));
                let key = if *when { "if" } else { "unless" };
                out.schema.push(quote!(::std::format!(
                    "{{ name = {}, {}, {} = {} }}",
                    #st_toml(#wire),
                    #text,
                    #key,
                    #st_toml(#flag_wire)
                )));
                out.plain.push(quote!(false));
            }
        }
        out.maxes.push(max);
        let is_bool = a.guard.is_none() && matches!(kind, Kind::Bool);
        earlier.push((id, wire, is_bool));
    }
    Ok(out)
}

/// A guarded field's statements: sent when `flag` is `when`; else a write refuses a value
/// other than the default, and a read gives the default.
fn guarded(
    k: &syn::Path,
    id: &Ident,
    ty: &syn::Type,
    wire: &str,
    (flag, when): (&Ident, bool),
    ser: &TokenStream,
) -> TokenStream {
    let cond = if when {
        quote!(self.#flag)
    } else {
        quote!(!self.#flag)
    };
    quote! {
        if #cond {
            #ser
        } else if S::WRITING {
            if self.#id != <#ty as ::core::default::Default>::default() {
                return ::core::result::Result::Err(#k::structs::guarded_value(
                    #k::ByteStream::base(s) + #k::ByteStream::position(s),
                    #wire,
                ));
            }
        } else {
            self.#id = ::core::default::Default::default();
        }
    }
}

/// `t` with every token at `span` (compile-time assertions report the field, not the derive).
fn respan(t: TokenStream, span: Span) -> TokenStream {
    use proc_macro2::TokenTree;
    t.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut ng = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

pub fn expand_enum(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs, true)?;
    let k = &c.krate;
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[derive(MessageEnum)] takes an enum without generic parameters",
        ));
    }
    let Data::Enum(e) = &input.data else {
        return Err(syn::Error::new(
            ident.span(),
            "#[derive(MessageEnum)] takes the enum of a protocol's messages: one variant \
             `Name(Message)` per message type",
        ));
    };
    let (variants, tys) = messages(ident, e)?;
    let body = quote!(#k::MessageBody);
    let decode_arms = variants.iter().zip(&tys).map(|(v, ty)| {
        quote! {
            t if t == <#ty as #body>::TYPE => #ident::#v(raw.decode::<#ty>()?),
        }
    });
    let read_arms = tys.iter().map(|ty| {
        quote! {
            t if t == <#ty as #body>::TYPE => #k::structs::read_body_as::<#ty, T>(raw, tracer),
        }
    });
    let dispatch_arms = tys.iter().map(|ty| {
        quote! {
            t if t == <#ty as #body>::TYPE => #k::handle_raw::<#ty>(raw, ctx, handler),
        }
    });
    let each = |f: TokenStream| {
        let arms = variants.iter().map(|v| quote!(#ident::#v(m) => { #f }));
        quote!(match self { #(#arms)* })
    };
    let type_arms = variants
        .iter()
        .zip(&tys)
        .map(|(v, ty)| quote!(#ident::#v(_) => <#ty as #body>::TYPE,));
    let bound = each(quote!(#body::size_upper_bound(m)));
    let push = each(quote!(w.push(stage, m)));
    let encode = each(quote!(#k::encode_message(dst, 0, stage, m, #k::max_body(#k::MAX_MTU))));
    let send = each(quote!(system.send(to, channel, stage, m, handler)));
    let handled = c
        .handler
        .as_ref()
        .map(|h| handler_impl(k, ident, h, dispatch_arms, &send));
    let schema_defs = tys
        .iter()
        .map(|ty| quote!(<#ty as #k::BatchStruct>::define(&mut w);));
    let inherent = inherent_impl(k, ident);
    let unique = unique_types(k, ident, tys.len());
    Ok(quote! {
        #[allow(clippy::all)]
        const _: () = {
            impl #k::MessageEnum for #ident {
                const TYPES: &'static [(u8, &'static str)] =
                    &[#((<#tys as #body>::TYPE, <#tys as #body>::NAME)),*];

                fn read_body<T: #k::__derive::Tracer>(
                    raw: &#k::RawMessage<'_>,
                    tracer: T,
                ) -> (#k::Result<()>, T) {
                    match raw.header.message_type {
                        #(#read_arms)*
                        _ => (::core::result::Result::Err(#k::structs::unlisted_type(raw)), tracer),
                    }
                }

                fn decode(raw: &#k::RawMessage<'_>) -> #k::Result<::core::option::Option<Self>> {
                    ::core::result::Result::Ok(::core::option::Option::Some(
                        match raw.header.message_type {
                            #(#decode_arms)*
                            _ => return ::core::result::Result::Ok(::core::option::Option::None),
                        },
                    ))
                }

                fn message_type(&self) -> u8 {
                    match self { #(#type_arms)* }
                }

                fn size_upper_bound(&self) -> usize {
                    #bound
                }

                fn push(
                    &mut self,
                    w: &mut #k::BatchWriter<'_>,
                    stage: #k::UpdateStage,
                ) -> #k::Result<bool> {
                    #push
                }

                fn encode(&mut self, dst: &mut [u8], stage: #k::UpdateStage) -> #k::Result<usize> {
                    #encode
                }

                fn schema() -> ::std::string::String {
                    let mut w = #k::SchemaWriter::new();
                    #(#schema_defs)*
                    #k::structs::set_text(<Self as #k::MessageEnum>::TYPES, w)
                }
            }

            #inherent

            #handled
            #unique
        };
    })
}

/// The variants of a message enum and the message type each holds.
fn messages(ident: &Ident, e: &syn::DataEnum) -> syn::Result<(Vec<Ident>, Vec<syn::Type>)> {
    let mut variants = Vec::new();
    let mut tys = Vec::new();
    for v in &e.variants {
        if let Some(attr) = v.attrs.iter().find(|a| a.path().is_ident("batch")) {
            return Err(syn::Error::new(
                attr.span(),
                "a variant takes no #[batch(...)]: its message's type and name are on the \
                 message struct (`#[batch(message_type = N, name = \"...\")]`)",
            ));
        }
        let ty = match &v.fields {
            Fields::Unnamed(u) if u.unnamed.len() == 1 => u.unnamed[0].ty.clone(),
            _ => {
                return Err(syn::Error::new(
                    v.span(),
                    "each variant holds one message: `Name(Message)`, where Message is a \
                     #[derive(BatchStruct)] struct with #[batch(message_type = N)] (a \
                     hand-written MessageBody goes in a hand-written MessageSet)",
                ));
            }
        };
        variants.push(v.ident.clone());
        tys.push(ty);
    }
    if variants.is_empty() {
        return Err(syn::Error::new(
            ident.span(),
            "a message enum needs a variant",
        ));
    }
    if variants.is_empty() {
        return Err(syn::Error::new(
            ident.span(),
            "a message enum needs a variant",
        ));
    }
    Ok((variants, tys))
}

/// With `handler = H`: `H`'s `Dispatch` (each listed type to its handler) and `send`.
fn handler_impl(
    k: &syn::Path,
    ident: &Ident,
    h: &syn::Type,
    dispatch_arms: impl Iterator<Item = TokenStream>,
    send: &TokenStream,
) -> TokenStream {
    quote! {
        impl #k::Dispatch for #h {
            fn dispatch(
                &mut self,
                ctx: &#k::NetworkContext,
                raw: &#k::RawMessage<'_>,
            ) -> #k::Result<()> {
                let handler = self;
                match raw.header.message_type {
                    #(#dispatch_arms)*
                    // A type the set does not list: skipped by its length.
                    _ => ::core::result::Result::Ok(()),
                }
            }
        }

        impl #ident {
            /// Sends it through a [`MessageSystem`](bitlens_batch::MessageSystem), handled
            /// at once on loopback.
            ///
            /// # Errors
            /// As `MessageSystem::send`.
            pub fn send(
                &mut self,
                system: &mut #k::MessageSystem,
                to: &[#k::ClientId],
                channel: #k::Channel,
                stage: #k::UpdateStage,
                handler: &mut #h,
            ) -> #k::Result<()> {
                #send
            }
        }
    }
}

/// The enum's own methods, so a caller needs no trait in scope.
fn inherent_impl(k: &syn::Path, ident: &Ident) -> TokenStream {
    quote! {
    impl #ident {
        /// Decodes a raw message: `Ok(None)` for a type the set does not list.
        ///
        /// # Errors
        /// The decode error, naming the message.
        pub fn decode(raw: &#k::RawMessage<'_>) -> #k::Result<::core::option::Option<Self>> {
            <Self as #k::MessageEnum>::decode(raw)
        }

        /// Its message type.
        pub fn message_type(&self) -> u8 {
            <Self as #k::MessageEnum>::message_type(self)
        }

        /// Its size upper bound.
        pub fn size_upper_bound(&self) -> usize {
            <Self as #k::MessageEnum>::size_upper_bound(self)
        }

        /// Appends it to a batch (`Ok(false)` when its bound does not fit).
        ///
        /// # Errors
        /// As `BatchWriter::push`.
        pub fn push(
            &mut self,
            w: &mut #k::BatchWriter<'_>,
            stage: #k::UpdateStage,
        ) -> #k::Result<bool> {
            <Self as #k::MessageEnum>::push(self, w, stage)
        }

        /// Encodes header and body at the start of `dst`, returning the bytes used.
        ///
        /// # Errors
        /// As `bitlens_batch::encode_message`.
        pub fn encode(&mut self, dst: &mut [u8], stage: #k::UpdateStage) -> #k::Result<usize> {
            <Self as #k::MessageEnum>::encode(self, dst, stage)
        }

        /// The `[batch]` section of the schema language that describes the set.
        pub fn schema() -> ::std::string::String {
            <Self as #k::MessageEnum>::schema()
        }

    }

    }
}

/// A compile-time check that no two messages share a type number or a name.
fn unique_types(k: &syn::Path, ident: &Ident, n: usize) -> TokenStream {
    quote! {
    const _: () = {
        let types = <#ident as #k::MessageEnum>::TYPES;
        let mut i = 0;
        while i < #n {
            let mut j = i + 1;
            while j < #n {
                assert!(
                    types[i].0 != types[j].0,
                    "two messages of the enum have one message type"
                );
                assert!(
                    !#k::structs::same_str(types[i].1, types[j].1),
                    "two messages of the enum have one name (rename one: \
                     #[batch(name = \"...\")])"
                );
                j += 1;
            }
            i += 1;
        }
    };
    }
}
