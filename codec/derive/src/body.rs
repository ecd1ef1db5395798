//! A list of fields (a struct, or an enum variant's): checked together (names, guards, previous
//! values, the sparse index) and generated as one serialize body, one fewest-bits sum and one
//! schema field list.

use crate::attrs::FieldAttrs;
use crate::fields::{Ctx, Siblings, is_bool, is_int, kind_of, option_inner};
use crate::forms::{Key, Kind, Ns};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

/// One field as declared: how to reach it, its name on the wire, its type and attributes.
pub struct Input {
    /// The Rust name (`x`, or `0` for a tuple field) as an identifier for lookups.
    pub rust: String,
    pub place: TokenStream,
    pub wire: String,
    pub ty: Type,
    pub attrs: FieldAttrs,
    pub span: Span,
}

enum Body {
    Skip,
    SparseIndex,
    Flatten,
    Value {
        kind: Box<Kind>,
        /// For `Option<T>` fields: `Some(flag)` for the implicit flag, `None` when a guard
        /// decides.
        option: Option<Option<String>>,
    },
}

struct Planned {
    input: Input,
    body: Body,
    /// The guard: the flag's place and wire name, and the value that means present.
    guard: Option<(TokenStream, String, bool)>,
}

/// The generated parts of a field list.
pub struct Generated {
    pub serialize: TokenStream,
    pub min_bits: TokenStream,
    /// Expressions of type `String`, each a field's schema keys.
    pub schema: Vec<TokenStream>,
    /// The sparse index field: its place, wire name and type.
    pub sparse_index: Option<(TokenStream, String, Type)>,
}

struct Earlier<'a>(&'a [Planned]);

impl Siblings for Earlier<'_> {
    fn earlier(&self, name: &Ident) -> Option<(TokenStream, String, Type, bool)> {
        let n = name.to_string();
        self.0.iter().rev().find(|p| p.input.rust == n).map(|p| {
            let guarded = p.guard.is_some() || !matches!(p.body, Body::Value { option: None, .. });
            (
                p.input.place.clone(),
                p.input.wire.clone(),
                p.input.ty.clone(),
                guarded,
            )
        })
    }
}

pub fn generate(ctx: &mut Ctx<'_>, inputs: Vec<Input>) -> syn::Result<Generated> {
    let mut planned: Vec<Planned> = Vec::new();
    for input in inputs {
        let guard = guard_of(&planned, &input.attrs)?;
        let body = body_of(ctx, &planned, &input, guard.is_some())?;
        planned.push(Planned { input, body, guard });
    }
    check_wire_names(&planned)?;
    let mut out = Emitter {
        k: ctx.krate.clone(),
        serialize: TokenStream::new(),
        min_terms: Vec::new(),
        schema: Vec::new(),
        sparse_index: None,
        pending: None,
    };
    for f in &planned {
        out.field(f);
    }
    flush(&mut out.serialize, &mut out.pending);
    let min_terms = &out.min_terms;
    let min_bits = quote!(0usize #(.saturating_add(#min_terms))*);
    Ok(Generated {
        serialize: out.serialize,
        min_bits,
        schema: out.schema,
        sparse_index: out.sparse_index,
    })
}

/// The guard of a field (`if`/`unless`): an earlier bool that is always present, its place,
/// wire name, and the value that means present.
fn guard_of(
    planned: &[Planned],
    a: &FieldAttrs,
) -> syn::Result<Option<(TokenStream, String, bool)>> {
    let Some((flag, when, gs)) = &a.guard else {
        return Ok(None);
    };
    let f = flag.to_string();
    let Some(p) = planned.iter().rev().find(|p| p.input.rust == f) else {
        return Err(syn::Error::new(
            flag.span(),
            format!(
                "no earlier field `{flag}`: `if`/`unless` names a bool field declared above this one"
            ),
        ));
    };
    let always = p.guard.is_none() && matches!(p.body, Body::Value { option: None, .. });
    if !is_bool(&p.input.ty) || !always {
        return Err(syn::Error::new(
            *gs,
            format!("`{flag}` is not a bool field that is always present: a guard names one"),
        ));
    }
    Ok(Some((p.input.place.clone(), p.input.wire.clone(), *when)))
}

/// What a field sends: nothing (`skip`), its sparse array's index, a flattened struct, or a
/// value of its wire form (an `Option` with its flag or guard).
fn body_of(
    ctx: &mut Ctx<'_>,
    planned: &[Planned],
    input: &Input,
    guarded: bool,
) -> syn::Result<Body> {
    let a = &input.attrs;
    if let Some(s) = a.skip {
        if a.keys.len() > 1 {
            return Err(syn::Error::new(
                s,
                "`skip` leaves the field off the wire: it takes no other attribute",
            ));
        }
        return Ok(Body::Skip);
    }
    if let Some(s) = a.sparse_index {
        if !is_int(&input.ty) {
            return Err(syn::Error::new(s, "the `sparse_index` field is an integer"));
        }
        if let Some((key, ks)) = a.first_refused(Key::beside_sparse_index) {
            return Err(syn::Error::new(
                ks,
                format!(
                    "`{}` on the `sparse_index` field: the sparse array sends the index itself (as a relative object index)",
                    key.name()
                ),
            ));
        }
        if planned.iter().any(|p| matches!(p.body, Body::SparseIndex)) {
            return Err(syn::Error::new(s, "a struct has one `sparse_index` field"));
        }
        return Ok(Body::SparseIndex);
    }
    if let Some(s) = a.flatten {
        if let Some((key, ks)) = a.first_refused(Key::beside_flatten) {
            return Err(syn::Error::new(
                ks,
                format!(
                    "`{}` with `flatten`: a flattened struct's fields keep their own names and attributes",
                    key.name()
                ),
            ));
        }
        let ty = &input.ty;
        let k = ctx.krate;
        ctx.items.push(quote_spanned! {s=>
            const _: () = ::core::assert!(
                <#ty as #k::BitPacked>::FIELDS,
                "`flatten` takes a struct (its fields go into this one)"
            );
        });
        return Ok(Body::Flatten);
    }
    let Some(inner) = option_inner(&input.ty) else {
        if let Some(f) = &a.flag {
            return Err(syn::Error::new(
                f.span(),
                "`flag` names the bool sent before an Option field",
            ));
        }
        let kind = kind_of(ctx, &input.ty, a, input.span, &Earlier(planned))?;
        return Ok(Body::Value {
            kind: Box::new(kind),
            option: None,
        });
    };
    let kind = kind_of(ctx, inner, a, input.span, &Earlier(planned))?;
    let flag = if guarded {
        if let Some(f) = &a.flag {
            return Err(syn::Error::new(
                f.span(),
                "`flag` names the bool of an Option without a guard; this one's guard decides",
            ));
        }
        None
    } else {
        Some(
            a.flag
                .as_ref()
                .map_or_else(|| format!("has_{}", input.wire), |f| f.value()),
        )
    };
    Ok(Body::Value {
        kind: Box::new(kind),
        option: Some(flag),
    })
}

/// Names on the wire must be unique among the fields that carry values.
fn check_wire_names(planned: &[Planned]) -> syn::Result<()> {
    let mut wire_names: Vec<(String, Span)> = Vec::new();
    for p in planned {
        let mut names = Vec::new();
        match &p.body {
            Body::Skip | Body::Flatten => {}
            Body::Value {
                option: Some(Some(flag)),
                ..
            } => {
                names.push(flag.clone());
                names.push(p.input.wire.clone());
            }
            Body::SparseIndex | Body::Value { .. } => names.push(p.input.wire.clone()),
        }
        for n in names {
            if n.is_empty() || n.contains(['.', '[', ']']) {
                return Err(syn::Error::new(
                    p.input.span,
                    format!("wire name {n:?} is empty or holds . [ ] (use a plain identifier)"),
                ));
            }
            if wire_names.iter().any(|(m, _)| *m == n) {
                return Err(syn::Error::new(
                    p.input.span,
                    format!(
                        "two fields are named \"{n}\" on the wire (rename one with `name = \"...\"`)"
                    ),
                ));
            }
            wire_names.push((n, p.input.span));
        }
    }
    Ok(())
}

/// The generated parts of a field list as they grow, field by field.
struct Emitter {
    k: syn::Path,
    serialize: TokenStream,
    min_terms: Vec<TokenStream>,
    schema: Vec<TokenStream>,
    sparse_index: Option<(TokenStream, String, Type)>,
    pending: Option<Pending>,
}

impl Emitter {
    /// One field: its markers before, its body, its markers after.
    fn field(&mut self, f: &Planned) {
        let k = self.k.clone();
        let p = quote!(#k::packed);
        let a = &f.input.attrs;
        let place = &f.input.place;
        if !a.check.is_empty() || a.align.is_some() || f.guard.is_none() {
            flush(&mut self.serialize, &mut self.pending);
        }
        self.checks(&a.check);
        if a.align.is_some() {
            self.align();
        }
        match &f.body {
            Body::Skip => {}
            Body::SparseIndex => {
                self.sparse_index = Some((place.clone(), f.input.wire.clone(), f.input.ty.clone()));
            }
            Body::Flatten => {
                let ty = &f.input.ty;
                self.serialize
                    .extend(quote! { <#ty as #k::BitPacked>::serialize(&mut #place, s)?; });
                self.min_terms
                    .push(quote!(<#ty as #k::BitPacked>::MIN_BITS));
                self.schema.push(quote!(::std::format!(
                    "type = \"include\", struct = {}",
                    #p::toml_str(#p::named_type(&<#ty as #k::BitPacked>::schema_type(w)))
                )));
            }
            Body::Value { kind, option } => {
                self.value_serialize(f, kind, option);
                self.value_schema(f, kind, option);
            }
        }
        if a.align_after.is_some() || !a.check_after.is_empty() {
            flush(&mut self.serialize, &mut self.pending);
        }
        if a.align_after.is_some() {
            self.align();
        }
        self.checks(&a.check_after);
    }

    fn checks(&mut self, labels: &[syn::LitStr]) {
        let k = &self.k;
        for label in labels {
            self.serialize.extend(quote! { s.check(#label)?; });
            self.min_terms.push(quote!(32usize));
            self.schema.push(quote!(::std::format!(
                "type = \"check\", label = {}",
                #k::packed::toml_str(#label)
            )));
        }
    }

    fn align(&mut self) {
        self.serialize.extend(quote! { s.align("align")?; });
        self.schema
            .push(quote!(::std::string::String::from("type = \"align\"")));
    }

    /// A value's serialize statements: direct, behind its Option's flag, or under its guard.
    fn value_serialize(&mut self, f: &Planned, kind: &Kind, option: &Option<Option<String>>) {
        let k = &self.k;
        let p = quote!(#k::packed);
        let place = &f.input.place;
        let wire = &f.input.wire;
        let name = quote!(#wire);
        let value = kind.serialize(k, &quote!(*__v), &name);
        let direct = kind.serialize(k, place, &name);
        // Fields under one guard share one branch, as a person writes them (the
        // hand-written rigid body tests at_rest once for both velocities).
        match (option, &f.guard) {
            (None, None) => {
                flush(&mut self.serialize, &mut self.pending);
                self.serialize.extend(direct);
            }
            (Some(Some(flag)), _) => {
                flush(&mut self.serialize, &mut self.pending);
                self.serialize.extend(quote! {
                    #p::flagged(s, #flag, &mut #place, |s, __v| {
                        #value
                        ::core::result::Result::Ok(())
                    })?;
                });
            }
            (None, Some((flag, fw, when))) => guarded(
                &mut self.serialize,
                &mut self.pending,
                (fw.clone(), *when),
                flag,
                direct,
                quote!(#p::absent(s, #name, #fw, &mut #place)?;),
            ),
            (Some(None), Some((flag, fw, when))) => guarded(
                &mut self.serialize,
                &mut self.pending,
                (fw.clone(), *when),
                flag,
                quote! {
                    let __v = #p::present_option(s, #name, #fw, &mut #place)?;
                    #value
                },
                quote!(#p::absent_option(s, #name, #fw, &mut #place)?;),
            ),
            (Some(None), None) => unreachable!("an Option without flag has a guard"),
        }
    }

    /// A value's schema entries (its flag's first) and its fewest bits (none when guarded).
    fn value_schema(&mut self, f: &Planned, kind: &Kind, option: &Option<Option<String>>) {
        let k = &self.k;
        let p = quote!(#k::packed);
        let wire = &f.input.wire;
        let keys = kind.schema(k);
        match (option, &f.guard) {
            (Some(Some(flag)), _) => {
                self.min_terms.push(quote!(1usize));
                self.schema.push(quote!(
                    ::std::format!("name = {}, type = \"bool\"", #p::toml_str(#flag))
                ));
                let guard = format!(", if = \"{flag}\"");
                self.schema.push(quote!(
                    ::std::format!("name = {}, {}{}", #p::toml_str(#wire), #keys, #guard)
                ));
            }
            (_, Some((_, flag, when))) => {
                let guard_key = if *when {
                    format!(", if = \"{flag}\"")
                } else {
                    format!(", unless = \"{flag}\"")
                };
                self.schema.push(quote!(
                    ::std::format!("name = {}, {}{}", #p::toml_str(#wire), #keys, #guard_key)
                ));
            }
            (_, None) => {
                self.min_terms.push(kind.min_bits(k));
                self.schema.push(quote!(
                    ::std::format!("name = {}, {}", #p::toml_str(#wire), #keys)
                ));
            }
        }
    }
}

/// The inputs of a list of fields, reached through `place_of(i, field)`.
pub fn inputs(
    fields: &syn::Fields,
    place_of: impl Fn(usize, &syn::Field) -> TokenStream,
) -> syn::Result<Vec<Input>> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let attrs = FieldAttrs::parse(&f.attrs, Ns::Bitlens)?;
        let rust = match &f.ident {
            Some(id) => {
                let s = id.to_string();
                s.strip_prefix("r#").unwrap_or(&s).to_owned()
            }
            None => i.to_string(),
        };
        let wire = attrs
            .name
            .as_ref()
            .map_or_else(|| rust.clone(), |n| n.value());
        out.push(Input {
            rust,
            place: place_of(i, f),
            wire,
            ty: f.ty.clone(),
            span: f.span(),
            attrs,
        });
    }
    Ok(out)
}

/// Guarded fields waiting to share one branch: the guard (flag's wire name, value that means
/// present), the flag's place, and the statements when present and when absent.
struct Pending {
    key: (String, bool),
    flag: TokenStream,
    present: TokenStream,
    absent: TokenStream,
}

/// Emits the pending guarded fields as one `if`.
fn flush(out: &mut TokenStream, pending: &mut Option<Pending>) {
    if let Some(Pending {
        key: (_, when),
        flag,
        present,
        absent,
    }) = pending.take()
    {
        out.extend(quote! {
            if #flag == #when {
                #present
            } else {
                #absent
            }
        });
    }
}

/// Adds a guarded field: to the pending branch when it has the same guard, else in a new one.
fn guarded(
    out: &mut TokenStream,
    pending: &mut Option<Pending>,
    key: (String, bool),
    flag: &TokenStream,
    present: TokenStream,
    absent: TokenStream,
) {
    match pending {
        Some(p) if p.key == key => {
            p.present.extend(present);
            p.absent.extend(absent);
        }
        _ => {
            flush(out, pending);
            *pending = Some(Pending {
                key,
                flag: flag.clone(),
                present,
                absent,
            });
        }
    }
}
