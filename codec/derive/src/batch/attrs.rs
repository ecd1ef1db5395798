//! `#[batch(...)]` on a batch struct or a message enum (the container). A field's
//! `#[batch(...)]` goes through the one field attribute parser (`crate::attrs`), with the keys the
//! table (`crate::forms`) gives the batch namespace.

use crate::attrs::{ident_of, once};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Type};

/// `#[batch(...)]` on the struct or enum.
pub struct Container {
    pub name: Option<LitStr>,
    pub message_type: Option<Expr>,
    pub handler: Option<Type>,
    pub exact_size: Option<Span>,
    pub krate: syn::Path,
}

pub fn container(attrs: &[syn::Attribute], message_set: bool) -> syn::Result<Container> {
    let mut out = Container {
        name: None,
        message_type: None,
        handler: None,
        exact_size: None,
        krate: syn::parse_quote!(::bitlens_batch),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("batch")) {
        attr.parse_nested_meta(|meta| {
            let key = ident_of(&meta);
            match key.as_str() {
                "crate" => {
                    let path: LitStr = meta.value()?.parse()?;
                    out.krate = path.parse()?;
                    Ok(())
                }
                "name" if !message_set => once(&mut out.name, meta.value()?.parse()?, &meta, &key),
                "message_type" if !message_set => {
                    once(&mut out.message_type, meta.value()?.parse()?, &meta, &key)
                }
                "exact_size" if !message_set => {
                    let span = meta.path.span();
                    once(&mut out.exact_size, span, &meta, &key)
                }
                "handler" if message_set => {
                    once(&mut out.handler, meta.value()?.parse()?, &meta, &key)
                }
                _ if message_set => Err(meta.error(format!(
                    "unknown key `{key}` on a message enum (it takes `handler` and `crate`; each \
                     message's type and name are on its struct: `#[batch(message_type = N)]`)"
                ))),
                _ => Err(meta.error(format!(
                    "unknown key `{key}` on a batch struct (expected `name`, `message_type`, \
                     `exact_size` or `crate`)"
                ))),
            }
        })?;
    }
    Ok(out)
}
