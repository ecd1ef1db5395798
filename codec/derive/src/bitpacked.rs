//! `#[derive(BitPacked)]`: structs (their fields), enums of unit variants (an `int` over their
//! numbers, the schema's `[enum]`) and enums with data (a tagged union: the variant's number,
//! then its fields; the schema's `[union]`).

use crate::attrs::{ContainerAttrs, VariantAttrs};
use crate::body::{self, Generated};
use crate::fields::{Ctx, int_lit};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let attrs = ContainerAttrs::parse(&input.attrs, false)?;
    let concrete = input.generics.params.is_empty();
    let mut ctx = Ctx::new(&attrs.krate, concrete);
    let impls = match &input.data {
        Data::Struct(s) => struct_impl(&mut ctx, input, &attrs, &s.fields)?,
        Data::Enum(e) if e.variants.iter().all(|v| matches!(v.fields, Fields::Unit)) => {
            plain_enum_impl(&mut ctx, input, &attrs, e)?
        }
        Data::Enum(e) => union_impl(&mut ctx, input, &attrs, e)?,
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "#[derive(BitPacked)] takes structs and enums, not unions",
            ));
        }
    };
    let items = &ctx.items;
    Ok(quote! {
        // The generated code casts literals and repeats checks a person would not write.
        #[allow(clippy::all)]
        const _: () = {
            #(#items)*
            #impls
        };
    })
}

/// The impl header's generics, with `T: BitPacked` added for every type parameter.
fn generics(input: &DeriveInput, k: &syn::Path) -> (TokenStream, TokenStream, TokenStream) {
    let mut g = input.generics.clone();
    let params: Vec<syn::Ident> = g.type_params().map(|p| p.ident.clone()).collect();
    {
        let wc = g.make_where_clause();
        for p in params {
            wc.predicates
                .push(syn::parse_quote!(#p: #k::BitPacked + ::core::default::Default));
        }
    }
    let (i, t, w) = g.split_for_impl();
    (quote!(#i), quote!(#t), quote!(#w))
}

fn schema_name(input: &DeriveInput, attrs: &ContainerAttrs) -> String {
    attrs
        .name
        .as_ref()
        .map_or_else(|| input.ident.to_string(), |n| n.value())
}

fn struct_impl(
    ctx: &mut Ctx<'_>,
    input: &DeriveInput,
    attrs: &ContainerAttrs,
    fields: &Fields,
) -> syn::Result<TokenStream> {
    let k = attrs.krate.clone();
    let inputs = body::inputs(fields, |i, f| match &f.ident {
        Some(id) => quote!(self.#id),
        None => {
            let idx = syn::Index::from(i);
            quote!(self.#idx)
        }
    })?;
    let Generated {
        serialize,
        min_bits,
        schema,
        sparse_index,
        ..
    } = body::generate(ctx, inputs)?;
    let name = &input.ident;
    let (impl_g, ty_g, where_g) = generics(input, &k);
    let base = schema_name(input, attrs);
    let p = quote!(#k::packed);
    let sparse = sparse_index.map(|(place, wire, ty)| {
        quote! {
            impl #impl_g #k::packed::SparseElement for #name #ty_g #where_g {
                const INDEX_NAME: &'static str = #wire;

                #[inline(always)]
                fn index(&self) -> i64 {
                    #place as i64
                }

                #[inline(always)]
                fn set_index(&mut self, index: i64) -> ::core::option::Option<()> {
                    #place = <#ty as ::core::convert::TryFrom<i64>>::try_from(index).ok()?;
                    ::core::option::Option::Some(())
                }
            }
        }
    });
    Ok(quote! {
        impl #impl_g #k::BitPacked for #name #ty_g #where_g {
            const MIN_BITS: usize = #min_bits;
            const FIELDS: bool = true;

            fn serialize<S: #k::Stream>(&mut self, s: &mut S) -> #k::Result<()> {
                #serialize
                ::core::result::Result::Ok(())
            }

            fn schema_type(w: &mut #p::SchemaWriter) -> ::std::string::String {
                let name = w.define::<Self>(#base, |w, name| {
                    let fields: ::std::vec::Vec<::std::string::String> = ::std::vec![#(#schema),*];
                    #p::struct_text(name, &fields)
                });
                ::std::format!("type = {}", #p::toml_str(&name))
            }
        }
        #sparse
    })
}

/// The numbers of unit variants: explicit literals, else one more than the previous.
fn discriminants(e: &syn::DataEnum) -> syn::Result<Vec<i64>> {
    let mut next: i128 = 0;
    let mut out = Vec::new();
    for v in &e.variants {
        if let Some((_, d)) = &v.discriminant {
            next = int_lit(d).ok_or_else(|| {
                syn::Error::new(
                    d.span(),
                    "give the variant's number as an integer literal (the derive reads it)",
                )
            })?;
        }
        let n = i64::try_from(next)
            .map_err(|_| syn::Error::new(v.span(), "a variant's number must fit i64"))?;
        out.push(n);
        next += 1;
    }
    Ok(out)
}

fn plain_enum_impl(
    ctx: &mut Ctx<'_>,
    input: &DeriveInput,
    attrs: &ContainerAttrs,
    e: &syn::DataEnum,
) -> syn::Result<TokenStream> {
    let _ = ctx;
    let k = &attrs.krate;
    if e.variants.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "an enum without variants has no value to send",
        ));
    }
    let numbers = discriminants(e)?;
    let min = *numbers.iter().min().unwrap_or(&0);
    let max = *numbers.iter().max().unwrap_or(&0);
    let mut sorted = numbers.clone();
    sorted.sort_unstable();
    for w in sorted.windows(2) {
        if w[0] + 1 != w[1] {
            return Err(syn::Error::new(
                input.ident.span(),
                format!(
                    "the variants' numbers leave {}..={} without a variant: a reader would accept numbers no variant holds (number the variants without gaps)",
                    w[0] + 1,
                    w[1] - 1
                ),
            ));
        }
    }
    let name = &input.ident;
    let mut idents = Vec::new();
    let mut wires = Vec::new();
    for v in &e.variants {
        let va = VariantAttrs::parse(&v.attrs)?;
        if let Some(l) = va.check.first().or(va.check_after.first()) {
            return Err(syn::Error::new(
                l.span(),
                "check markers go on the fields of a struct (this enum's variants carry no fields)",
            ));
        }
        idents.push(v.ident.clone());
        wires.push(va.name.map_or_else(|| v.ident.to_string(), |n| n.value()));
    }
    for (i, w) in wires.iter().enumerate() {
        if wires[..i].contains(w) {
            return Err(syn::Error::new(
                e.variants[i].span(),
                format!("two variants are named \"{w}\" (rename one)"),
            ));
        }
    }
    let (impl_g, ty_g, where_g) = generics(input, k);
    let base = schema_name(input, attrs);
    let p = quote!(#k::packed);
    let contiguous_from_zero = numbers.iter().enumerate().all(|(i, n)| *n == i as i64);
    let values = if contiguous_from_zero {
        let list = wires
            .iter()
            .map(|w| toml_str(w))
            .collect::<Vec<_>>()
            .join(", ");
        format!("values = [{list}]")
    } else {
        let list = wires
            .iter()
            .zip(&numbers)
            .map(|(w, n)| format!("{} = {n}", toml_key(w)))
            .collect::<Vec<_>>()
            .join(", ");
        format!("values = {{ {list} }}")
    };
    Ok(quote! {
        impl #impl_g #k::BitPacked for #name #ty_g #where_g {
            const MIN_BITS: usize = #k::bits_required(#min, #max) as usize;

            #[inline(always)]
            fn serialize<S: #k::Stream>(&mut self, s: &mut S) -> #k::Result<()> {
                #k::BitPacked::serialize_field(self, s, "")
            }

            fn serialize_field<S: #k::Stream>(&mut self, s: &mut S, name: &str) -> #k::Result<()> {
                let mut x: i64 = match self {
                    #(#name::#idents => #numbers,)*
                };
                s.int(name, &mut x, #min, #max)?;
                if S::READING {
                    *self = match x {
                        #(#numbers => #name::#idents,)*
                        other => {
                            let kind = #k::ErrorKind::OutOfRange {
                                value: i128::from(other),
                                min: i128::from(#min),
                                max: i128::from(#max),
                            };
                            return ::core::result::Result::Err(#k::Error::new(kind, s.bit_position(), name));
                        }
                    };
                    let text: &'static str = match self {
                        #(#name::#idents => #wires,)*
                    };
                    s.annotate_str(text);
                }
                ::core::result::Result::Ok(())
            }

            fn schema_type(w: &mut #p::SchemaWriter) -> ::std::string::String {
                let name = w.define::<Self>(#base, |_, name| {
                    ::std::format!("[enum.{}]\n{}\n", #p::toml_key(name), #values)
                });
                ::std::format!("type = {}", #p::toml_str(&name))
            }
        }
    })
}

/// The body of one variant of a data enum (a union or a packet set): its serialize statements
/// (over bindings `__f0`, ...), how to build its default, and its schema body.
pub struct VariantBody {
    pub pattern: TokenStream,
    pub default: TokenStream,
    pub serialize: TokenStream,
    pub min_bits: TokenStream,
    /// An expression of type `Option<String>` (with `w` in scope): the name of the struct that
    /// is the variant's body in the schema, `None` for a variant without fields.
    pub schema_body: TokenStream,
}

/// `name` is the variant's wire name; `base` the name a synthesized body struct starts from.
pub fn variant_body(
    ctx: &mut Ctx<'_>,
    enum_name: &syn::Ident,
    v: &syn::Variant,
    va: &VariantAttrs,
    base: &str,
) -> syn::Result<VariantBody> {
    let k = ctx.krate.clone();
    let p = quote!(#k::packed);
    let ident = &v.ident;
    let binding = |i: usize| format_ident!("__f{}", i);
    let checks = &va.check;
    let checks_after = &va.check_after;
    let check_bits = 32usize * (checks.len() + checks_after.len());
    let check_schema_before: Vec<TokenStream> = checks
        .iter()
        .map(|l| quote!(::std::format!("type = \"check\", label = {}", #p::toml_str(#l))))
        .collect();
    let check_schema_after: Vec<TokenStream> = checks_after
        .iter()
        .map(|l| quote!(::std::format!("type = \"check\", label = {}", #p::toml_str(#l))))
        .collect();
    let default_fields = v
        .fields
        .iter()
        .map(|_| quote!(::core::default::Default::default()));
    let (pattern, default) = match &v.fields {
        Fields::Unit => (quote!(#enum_name::#ident), quote!(#enum_name::#ident)),
        Fields::Unnamed(f) => {
            let b: Vec<_> = (0..f.unnamed.len()).map(binding).collect();
            (
                quote!(#enum_name::#ident(#(#b),*)),
                quote!(#enum_name::#ident(#(#default_fields),*)),
            )
        }
        Fields::Named(f) => {
            let names: Vec<_> = f.named.iter().filter_map(|f| f.ident.clone()).collect();
            let b: Vec<_> = (0..names.len()).map(binding).collect();
            (
                quote!(#enum_name::#ident { #(#names: #b),* }),
                quote!(#enum_name::#ident { #(#names: #default_fields),* }),
            )
        }
    };
    // A newtype variant of a type with fields, without attributes: that type's fields are the
    // body (the demo's `A(PacketA)`).
    let plain_newtype = match &v.fields {
        Fields::Unnamed(f) if f.unnamed.len() == 1 => {
            let field = &f.unnamed[0];
            let fa = crate::attrs::FieldAttrs::parse(&field.attrs, crate::forms::Ns::Bitlens)?;
            fa.keys.is_empty().then(|| field.ty.clone())
        }
        _ => None,
    };
    if let Some(ty) = plain_newtype {
        ctx.items.push(quote::quote_spanned! {ty.span()=>
            const _: () = ::core::assert!(
                <#ty as #k::BitPacked>::FIELDS,
                "a variant's single field is its body: it must be a struct (or give it attributes, or name it)"
            );
        });
        let serialize = quote! {
            #(s.check(#checks)?;)*
            <#ty as #k::BitPacked>::serialize(__f0, s)?;
            #(s.check(#checks_after)?;)*
        };
        let min_bits = quote!(<#ty as #k::BitPacked>::MIN_BITS.saturating_add(#check_bits));
        let schema_body = if checks.is_empty() && checks_after.is_empty() {
            quote! {
                ::core::option::Option::Some(::std::string::String::from(
                    #p::named_type(&<#ty as #k::BitPacked>::schema_type(w)),
                ))
            }
        } else {
            quote! {
                {
                    let inner = ::std::string::String::from(
                        #p::named_type(&<#ty as #k::BitPacked>::schema_type(w)),
                    );
                    ::core::option::Option::Some(w.synthesize(#base, |_, name| {
                        let mut fields: ::std::vec::Vec<::std::string::String> = ::std::vec![#(#check_schema_before),*];
                        fields.push(::std::format!("type = \"include\", struct = {}", #p::toml_str(&inner)));
                        fields.extend([#(#check_schema_after),*]);
                        #p::struct_text(name, &fields)
                    }))
                }
            }
        };
        return Ok(VariantBody {
            pattern,
            default,
            serialize,
            min_bits,
            schema_body,
        });
    }
    let inputs = body::inputs(&v.fields, |i, _| {
        let b = binding(i);
        quote!((*#b))
    })?;
    let Generated {
        serialize: fields,
        min_bits,
        schema,
        sparse_index,
        ..
    } = body::generate(ctx, inputs)?;
    if sparse_index.is_some() {
        return Err(syn::Error::new(
            v.span(),
            "`sparse_index` marks a field of a struct that is a sparse array's element, not of a variant",
        ));
    }
    let serialize = quote! {
        #(s.check(#checks)?;)*
        #fields
        #(s.check(#checks_after)?;)*
    };
    let has_fields = !v.fields.is_empty() || !checks.is_empty() || !checks_after.is_empty();
    let schema_body = if has_fields {
        quote! {
            ::core::option::Option::Some(w.synthesize(#base, |w, name| {
                let mut fields: ::std::vec::Vec<::std::string::String> = ::std::vec![#(#check_schema_before),*];
                fields.extend([#(#schema),*]);
                fields.extend([#(#check_schema_after),*]);
                #p::struct_text(name, &fields)
            }))
        }
    } else {
        quote!(::core::option::Option::None)
    };
    Ok(VariantBody {
        pattern,
        default,
        serialize,
        min_bits: quote!(#min_bits.saturating_add(#check_bits)),
        schema_body,
    })
}

fn union_impl(
    ctx: &mut Ctx<'_>,
    input: &DeriveInput,
    attrs: &ContainerAttrs,
    e: &syn::DataEnum,
) -> syn::Result<TokenStream> {
    let k = attrs.krate.clone();
    let p = quote!(#k::packed);
    let name = &input.ident;
    let base = schema_name(input, attrs);
    let tag = attrs
        .tag_name
        .as_ref()
        .map_or_else(|| "variant".to_owned(), |t| t.value());
    if let Some((_, d)) = e.variants.iter().find_map(|v| v.discriminant.as_ref()) {
        return Err(syn::Error::new(
            d.span(),
            "a tagged union numbers its variants in order from 0: remove the explicit number",
        ));
    }
    let n = e.variants.len() as i64;
    let mut bodies = Vec::new();
    let mut wires = Vec::new();
    for v in &e.variants {
        let va = VariantAttrs::parse(&v.attrs)?;
        let wire = variant_wire(v, &va, &wires, "variants")?;
        let body = variant_body(ctx, name, v, &va, &format!("{base}{wire}"))?;
        wires.push(wire);
        bodies.push(body);
    }
    let (impl_g, ty_g, where_g) = generics(input, &k);
    let numbers: Vec<i64> = (0..n).collect();
    let patterns: Vec<&TokenStream> = bodies.iter().map(|b| &b.pattern).collect();
    let defaults: Vec<&TokenStream> = bodies.iter().map(|b| &b.default).collect();
    let serializes: Vec<&TokenStream> = bodies.iter().map(|b| &b.serialize).collect();
    let min_terms: Vec<&TokenStream> = bodies.iter().map(|b| &b.min_bits).collect();
    let schema_bodies: Vec<&TokenStream> = bodies.iter().map(|b| &b.schema_body).collect();
    let wild = wildcards(name, e);
    let tag_value = if tag == "variant" {
        String::new()
    } else {
        format!("tag_name = {}\n", toml_str(&tag))
    };
    Ok(quote! {
        impl #impl_g #k::BitPacked for #name #ty_g #where_g {
            const MIN_BITS: usize = {
                let mut fewest = usize::MAX;
                #(fewest = #p::min_bits(fewest, #min_terms);)*
                #k::bits_required(0, #n - 1) as usize + fewest
            };
            const FIELDS: bool = true;

            fn serialize<S: #k::Stream>(&mut self, s: &mut S) -> #k::Result<()> {
                let mut t: i64 = match self {
                    #(#wild => #numbers,)*
                };
                s.int(#tag, &mut t, 0, #n - 1)?;
                if S::READING {
                    let now: i64 = match self {
                        #(#wild => #numbers,)*
                    };
                    if now != t {
                        *self = match t {
                            #(#numbers => #defaults,)*
                            other => {
                                let kind = #k::ErrorKind::OutOfRange {
                                    value: i128::from(other),
                                    min: 0,
                                    max: i128::from(#n - 1),
                                };
                                return ::core::result::Result::Err(#k::Error::new(kind, s.bit_position(), #tag));
                            }
                        };
                    }
                    let text: &'static str = match t {
                        #(#numbers => #wires,)*
                        _ => "",
                    };
                    s.annotate_str(text);
                }
                match self {
                    #(#patterns => { #serializes })*
                }
                ::core::result::Result::Ok(())
            }

            fn schema_type(w: &mut #p::SchemaWriter) -> ::std::string::String {
                let name = w.define::<Self>(#base, |w, name| {
                    let mut text = ::std::format!("[union.{}]\n{}variants = [\n", #p::toml_key(name), #tag_value);
                    #(
                        let body: ::core::option::Option<::std::string::String> = #schema_bodies;
                        match body {
                            ::core::option::Option::Some(body) => text.push_str(&::std::format!(
                                "  {{ name = {}, body = {} }},\n",
                                #p::toml_str(#wires),
                                #p::toml_str(&body)
                            )),
                            ::core::option::Option::None => text.push_str(&::std::format!(
                                "  {{ name = {} }},\n",
                                #p::toml_str(#wires)
                            )),
                        }
                    )*
                    text.push_str("]\n");
                    text
                });
                ::std::format!("type = {}", #p::toml_str(&name))
            }
        }
    })
}

/// A variant's wire name (`name = "..."`, else its identifier), refused when an earlier variant
/// (of `taken`) has it; `what` names the variants in the error.
pub fn variant_wire(
    v: &syn::Variant,
    va: &VariantAttrs,
    taken: &[String],
    what: &str,
) -> syn::Result<String> {
    let wire = va
        .name
        .as_ref()
        .map_or_else(|| v.ident.to_string(), |n| n.value());
    if taken.contains(&wire) {
        return Err(syn::Error::new(
            v.span(),
            format!("two {what} are named \"{wire}\" (rename one)"),
        ));
    }
    Ok(wire)
}

/// A pattern for each variant that matches it whatever its fields.
pub fn wildcards(name: &syn::Ident, e: &syn::DataEnum) -> Vec<TokenStream> {
    e.variants
        .iter()
        .map(|v| {
            let id = &v.ident;
            match &v.fields {
                Fields::Unit => quote!(#name::#id),
                Fields::Unnamed(_) => quote!(#name::#id(..)),
                Fields::Named(_) => quote!(#name::#id { .. }),
            }
        })
        .collect()
}

/// A TOML basic string (as `bitlens_codec::packed::toml_str`, at expansion time).
pub fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key: bare when it can be, else quoted.
pub fn toml_key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { s.to_owned() } else { toml_str(s) }
}

#[cfg(test)]
mod tests {
    /// The derive writes names into the schema text at expansion time with its own copies of
    /// the codec's `toml_str`/`toml_key` (a proc-macro crate cannot call the codec, which
    /// depends on it): the two copies must quote every name alike.
    #[test]
    fn toml_str_and_toml_key_are_the_codecs() {
        let names = [
            "plain",
            "",
            "with space",
            "kebab-case_9",
            "quote\"inside",
            "back\\slash",
            "new\nline",
            "tab\there",
            "cr\r",
            "bell\u{7}",
            "del\u{7f}",
            "\u{85}next-line",
            "é ü 漢字",
            "emoji 🎮",
        ];
        for s in names {
            assert_eq!(
                super::toml_str(s),
                bitlens_codec::packed::toml_str(s),
                "{s:?}"
            );
            assert_eq!(
                super::toml_key(s),
                bitlens_codec::packed::toml_key(s),
                "{s:?}"
            );
        }
    }
}
