//! `#[derive(Tagged)]`: the one `report` function of a struct from `#[tag(N)]` attributes.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::{Data, DeriveInput, Fields, LitInt, LitStr, Member, Token};

struct StructAttrs {
    removed: Vec<(u64, Span)>,
    krate: syn::Path,
}

fn struct_attrs(input: &DeriveInput) -> syn::Result<StructAttrs> {
    let mut attrs = StructAttrs {
        removed: Vec::new(),
        krate: syn::parse_quote!(::bitlens_tagged),
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("tag")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("removed") {
                let content;
                syn::parenthesized!(content in meta.input);
                let ids = content.parse_terminated(|p| p.parse::<LitInt>(), Token![,])?;
                for id in ids {
                    attrs.removed.push((id.base10_parse::<u64>()?, id.span()));
                }
                Ok(())
            } else if meta.path.is_ident("crate") {
                let path: LitStr = meta.value()?.parse()?;
                attrs.krate = path.parse()?;
                Ok(())
            } else {
                Err(meta.error("expected `removed(ids...)` or `crate = \"path\"`"))
            }
        })?;
    }
    Ok(attrs)
}

enum FieldTag {
    Id(u64),
    Skip,
}

fn field_tag(field: &syn::Field) -> syn::Result<FieldTag> {
    let mut found = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("tag")) {
        if found.is_some() {
            return Err(syn::Error::new_spanned(
                attr,
                "only one #[tag(...)] per field",
            ));
        }
        let tag = if let Ok(id) = attr.parse_args::<LitInt>() {
            FieldTag::Id(id.base10_parse()?)
        } else {
            let mut skip = false;
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("skip") {
                    skip = true;
                    Ok(())
                } else {
                    Err(meta.error("expected a field id `#[tag(3)]` or `#[tag(skip)]`"))
                }
            })?;
            FieldTag::Skip
        };
        found = Some(tag);
    }
    found.ok_or_else(|| {
        syn::Error::new_spanned(
            field,
            "every field needs `#[tag(N)]` with its id, or `#[tag(skip)]`",
        )
    })
}

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let attrs = struct_attrs(input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            input,
            "#[derive(Tagged)] supports structs only",
        ));
    };
    let members: Vec<(Member, &syn::Field)> = match &data.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| (Member::Named(f.ident.clone().expect("named field")), f))
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| (Member::Unnamed(i.into()), f))
            .collect(),
        Fields::Unit => Vec::new(),
    };

    let mut tagged = Vec::new();
    for (member, field) in &members {
        if let FieldTag::Id(id) = field_tag(field)? {
            if let Some((_, _)) = attrs.removed.iter().find(|(r, _)| *r == id) {
                return Err(syn::Error::new_spanned(
                    field,
                    format!("field id {id} was removed and must never be reused: pick a new id"),
                ));
            }
            if tagged.iter().any(|(other, _, _)| *other == id) {
                return Err(syn::Error::new_spanned(
                    field,
                    format!("field id {id} is used twice"),
                ));
            }
            tagged.push((id, member.clone(), field));
        }
    }
    tagged.sort_by_key(|(id, _, _)| *id);

    let krate = &attrs.krate;
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let calls = tagged.iter().map(|(id, member, _)| {
        let label = match member {
            Member::Named(ident) => ident.to_string(),
            Member::Unnamed(index) => index.index.to_string(),
        };
        quote! {
            reporter.field(#id, #label, &mut self.#member)?;
        }
    });
    let removed = attrs.removed.iter().map(|(id, _)| id);
    Ok(quote! {
        impl #impl_generics #krate::Tagged for #name #ty_generics #where_clause {
            const REMOVED_IDS: &'static [u64] = &[#(#removed),*];

            fn report<__R: #krate::Reporter>(
                &mut self,
                reporter: &mut __R,
            ) -> ::core::result::Result<(), #krate::Error> {
                #(#calls)*
                ::core::result::Result::Ok(())
            }
        }
    })
}
