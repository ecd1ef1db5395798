//! The code and schema text of one batch value ([`Gen`]): its `ByteStream` call with the range
//! checks around it, its fewest and most bytes, and its `type = ...` keys.

use super::fields::{Check, Kind};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, Ident, Type};

/// The code and schema text of one value.
pub struct Gen {
    pub serialize: TokenStream,
    pub min: TokenStream,
    pub max: TokenStream,
    /// True when the value may sit in a `pod` struct: fixed width, nothing checked on read.
    pub plain: TokenStream,
    /// Code that evaluates to the schema's `type = ..., keys` text (no braces, no name).
    pub schema: TokenStream,
    /// Compile-time assertions.
    pub asserts: TokenStream,
}

fn le_call(k: &syn::Path, prim: &str, name: &TokenStream, place: &TokenStream) -> TokenStream {
    let method = Ident::new(prim, Span::call_site());
    if prim == "u8" {
        quote!(#k::ByteStream::u8(s, #name, &mut #place)?;)
    } else {
        quote!(<S as #k::LittleEndian>::#method(s, #name, &mut #place)?;)
    }
}

fn check_code(
    k: &syn::Path,
    check: &Check,
    value: &TokenStream,
    all: bool,
    err: &TokenStream,
) -> TokenStream {
    let st = quote!(#k::structs);
    match (check, all) {
        (Check::None, _) => quote!(),
        (Check::Range(lo, hi), false) => {
            quote!(#st::check_range(#value as u64, (#lo) as u64, (#hi) as u64, at, #err)?;)
        }
        (Check::Abs(m), false) => quote!(#st::check_abs(#value as i64, (#m) as u64, at, #err)?;),
        (Check::Range(lo, hi), true) => {
            quote!(#st::check_range_all(&#value[..], (#lo) as u64, (#hi) as u64, at, #err)?;)
        }
        (Check::Abs(m), true) => quote!(#st::check_abs_all(&#value[..], (#m) as u64, at, #err)?;),
    }
}

/// The declared range a trace records with the value read next (`ByteStream::trace_range`):
/// `range` as given, `abs_max` as `-abs_max..=abs_max`. A range of the type's every value is no
/// range, as the schema interpreter reads `min = 0, max = u32::MAX`.
fn trace_range_code(k: &syn::Path, check: &Check, prim: &str) -> TokenStream {
    match check {
        Check::None => quote!(),
        Check::Range(lo, hi) => {
            let t = Ident::new(prim, Span::call_site());
            quote! {
                if S::READING && !((#lo) as u64 == 0 && (#hi) as u64 == <#t>::MAX as u64) {
                    #k::ByteStream::trace_range(s, (#lo) as i128, (#hi) as i128);
                }
            }
        }
        Check::Abs(m) => quote! {
            if S::READING {
                #k::ByteStream::trace_range(s, -((#m) as i128), (#m) as i128);
            }
        },
    }
}

fn check_text(check: &Check) -> TokenStream {
    match check {
        Check::None => quote!(::std::string::String::new()),
        Check::Range(lo, hi) => {
            quote!(::std::format!(", min = {}, max = {}", (#lo) as u64, (#hi) as u64))
        }
        Check::Abs(m) => quote!(::std::format!(", abs_max = {}", (#m) as u64)),
    }
}

fn is_checked(check: &Check) -> bool {
    !matches!(check, Check::None)
}

fn size_of(prim: &str) -> usize {
    match prim {
        "u8" | "i8" | "bool" => 1,
        "u16" | "i16" => 2,
        "u32" | "i32" | "f32" => 4,
        _ => 8,
    }
}

/// A value read or written by one stream call, its range checked before a write and after a
/// read (the schema interpreter's order), `bytes` its fewest and most bytes.
#[allow(clippy::too_many_arguments)]
fn checked_value(
    k: &syn::Path,
    call: TokenStream,
    check: &Check,
    place: &TokenStream,
    err: &TokenStream,
    schema_ty: &str,
    bytes: (TokenStream, TokenStream),
    plain: TokenStream,
) -> Gen {
    let check_now = check_code(k, check, place, false, err);
    let text = check_text(check);
    let (min, max) = bytes;
    Gen {
        serialize: quote! {
            let at = #k::ByteStream::base(s) + #k::ByteStream::position(s);
            if S::WRITING { #check_now }
            #call
            if S::READING { #check_now }
        },
        min,
        max,
        plain,
        schema: quote!(::std::format!("type = \"{}\"{}", #schema_ty, #text)),
        asserts: quote!(),
    }
}

/// A string or byte vector: a packed length in `0..=max`, then the bytes.
fn length_prefixed(
    call: TokenStream,
    max: TokenStream,
    st: &TokenStream,
    schema_ty: &str,
    what: &str,
) -> Gen {
    let too_long = format!("{what} is at most 65529 (the largest body)");
    Gen {
        serialize: call,
        min: quote!(1),
        max: quote!(#st::varint_len(#max) + (#max)),
        plain: quote!(false),
        schema: quote!(::std::format!("type = \"{}\", max_len = {}", #schema_ty, #max)),
        asserts: quote!(assert!((#max) <= #st::MAX_BODY, #too_long);),
    }
}

/// Code for one value at `place`, traced as `name`, its range errors naming `err`.
pub fn generate(
    k: &syn::Path,
    kind: &Kind,
    ty: &Type,
    place: &TokenStream,
    name: &TokenStream,
    err: &TokenStream,
) -> Gen {
    let st = quote!(#k::structs);
    let size = quote!(::core::mem::size_of::<#ty>());
    let none = quote!();
    match kind {
        Kind::Bool => Gen {
            serialize: quote!(#k::ByteStream::bool(s, #name, &mut #place)?;),
            min: quote!(1),
            max: quote!(1),
            plain: quote!(false),
            schema: quote!(::std::string::String::from("type = \"bool\"")),
            asserts: none,
        },
        Kind::Le(p, check) => {
            let traced = trace_range_code(k, check, p);
            let call = le_call(k, p, name, place);
            let call = quote!(#traced #call);
            let n = size_of(p);
            let plain = !is_checked(check);
            let mut g = checked_value(
                k,
                call,
                check,
                place,
                err,
                p,
                (quote!(#n), quote!(#n)),
                quote!(#plain),
            );
            g.asserts = range_asserts(check, p);
            g
        }
        Kind::Packed(p, check) => {
            let call = match *p {
                "u32" => quote!(#k::ByteStream::packed_u32(s, #name, &mut #place)?;),
                "u64" => quote!(#k::ByteStream::varint(s, #name, &mut #place)?;),
                "i32" => quote!(#k::ByteStream::packed_i32(s, #name, &mut #place)?;),
                _ => quote!(#k::ByteStream::packed_i64(s, #name, &mut #place)?;),
            };
            let traced = trace_range_code(k, check, p);
            let call = quote!(#traced #call);
            let max: usize = if p.ends_with("32") { 5 } else { 10 };
            let schema_ty = format!("packed_{p}");
            let mut g = checked_value(
                k,
                call,
                check,
                place,
                err,
                &schema_ty,
                (quote!(1), quote!(#max)),
                quote!(false),
            );
            g.asserts = range_asserts(check, p);
            g
        }
        Kind::Str(max) => length_prefixed(
            quote!(#k::ByteStream::string(s, #name, &mut #place, #max)?;),
            quote!(#max),
            &st,
            "string",
            "a String's max_len",
        ),
        Kind::Inline => length_prefixed(
            quote!(#k::ByteStream::text(s, #name, &mut #place)?;),
            quote!(<#ty>::CAPACITY),
            &st,
            "string",
            "an InlineStr's capacity",
        ),
        Kind::ByteVec(max) => length_prefixed(
            quote!(#k::ByteStream::byte_vec(s, #name, &mut #place, #max)?;),
            quote!(#max),
            &st,
            "bytes",
            "a byte vector's max_len",
        ),
        Kind::Bytes => Gen {
            serialize: quote! {
                #k::ByteStream::slice(s, #name, &mut #place[..], #k::SliceKind::Bytes)?;
            },
            min: size.clone(),
            max: size.clone(),
            plain: quote!(true),
            schema: quote!(::std::format!("type = \"bytes\", len = {}", #size)),
            asserts: none,
        },
        Kind::Pod(p, check) => pod_array(k, p, check, &size, place, name, err),
        Kind::PodStruct => pod_struct(k, ty, &size, place, name),
        Kind::Struct => Gen {
            serialize: quote! {
                #k::ByteStream::scope(s, #name, |s| <#ty as #k::BatchStruct>::serialize_fields(&mut #place, s))?;
            },
            min: quote!(<#ty as #k::BatchStruct>::MIN_BYTES),
            max: quote!(<#ty as #k::BatchStruct>::MAX_BYTES),
            plain: quote!(false),
            schema: quote!({
                <#ty as #k::BatchStruct>::define(w);
                ::std::format!("type = {}", #st::toml_str(<#ty as #k::BatchStruct>::STRUCT_NAME))
            }),
            asserts: none,
        },
        Kind::Array {
            max_len,
            element,
            element_ty,
            inline,
        } => array(k, max_len, element, element_ty, *inline, place, name),
        Kind::ObjectId(max) => Gen {
            serialize: quote!(#k::link::serialize_object_id_bytes(s, #name, &mut #place, (#max) as u32)?;),
            min: quote!(1),
            max: quote!(5),
            plain: quote!(false),
            schema: quote!(::std::format!(
                "type = \"packed_u32\", min = 1, max = {}",
                (#max) as u32
            )),
            asserts: id_asserts(max),
        },
        Kind::Reference(max) => Gen {
            // Any id in range is accepted: the game resolves it in its linking context when it
            // handles the message.
            serialize: quote! {
                #k::link::serialize_id_bytes(s, #name, &mut #place, (#max) as u32, &#k::__derive::AnyId)?;
            },
            min: quote!(1),
            max: quote!(5),
            plain: quote!(false),
            schema: quote!(::std::format!("type = \"packed_u32\", max = {}", (#max) as u32)),
            asserts: id_asserts(max),
        },
    }
}

/// `[T; N]` of a primitive in one copy, each element's range checked.
fn pod_array(
    k: &syn::Path,
    p: &str,
    check: &Check,
    size: &TokenStream,
    place: &TokenStream,
    name: &TokenStream,
    err: &TokenStream,
) -> Gen {
    let before = check_code(k, check, place, true, err);
    let text = check_text(check);
    let plain = !is_checked(check);
    let n = size_of(p);
    Gen {
        serialize: quote! {
            let at = #k::ByteStream::base(s) + #k::ByteStream::position(s);
            if S::WRITING { #before }
            #k::ByteStream::pod(s, #name, &mut #place)?;
            if S::READING { #before }
        },
        min: size.clone(),
        max: size.clone(),
        plain: quote!(#plain),
        schema: quote!(::std::format!(
            "type = \"pod\", element = \"{}\", len = {}{}",
            #p,
            #size / #n,
            #text
        )),
        asserts: range_asserts(check, p),
    }
}

/// A `pod` batch struct, sent in one copy: its fields must be plain and fill its memory.
fn pod_struct(
    k: &syn::Path,
    ty: &Type,
    size: &TokenStream,
    place: &TokenStream,
    name: &TokenStream,
) -> Gen {
    let st = quote!(#k::structs);
    Gen {
        serialize: quote!(#k::ByteStream::pod(s, #name, &mut #place)?;),
        min: size.clone(),
        max: size.clone(),
        plain: quote!(<#ty as #k::BatchStruct>::PLAIN),
        schema: quote!({
            <#ty as #k::BatchStruct>::define(w);
            ::std::format!(
                "type = \"pod\", element = {}",
                #st::toml_str(<#ty as #k::BatchStruct>::STRUCT_NAME)
            )
        }),
        asserts: quote! {
            assert!(
                <#ty as #k::BatchStruct>::PLAIN,
                "a `pod` struct is sent in one unchecked copy: its fields must be fixed-width \
                 numbers, pod arrays, raw bytes or pod structs, without range checks or guards"
            );
            assert!(
                <#ty as #k::BatchStruct>::MIN_BYTES == #size
                    && <#ty as #k::BatchStruct>::MAX_BYTES == #size,
                "a `pod` struct's fields must fill its memory exactly (#[repr(C)], no padding)"
            );
        },
    }
}

/// A `Vec` or `InlineVec` of at most `max_len` elements: a count, then each element in a scope.
fn array(
    k: &syn::Path,
    max_len: &Expr,
    element: &Kind,
    element_ty: &Type,
    inline: bool,
    place: &TokenStream,
    name: &TokenStream,
) -> Gen {
    let st = quote!(#k::structs);
    let item = quote!((*item));
    let empty = quote!("");
    // An element's range errors name the array it is in (its own trace name: "" for
    // an array inside an array), as the schema interpreter's do.
    let e = generate(k, element, element_ty, &item, &empty, name);
    let (eser, emin, emax, eschema, easserts) =
        (&e.serialize, &e.min, &e.max, &e.schema, &e.asserts);
    // A Vec is sized by a count checked against the bytes that remain: each element's
    // memory must be paid for by its bytes on the wire.
    let grows = (!inline).then(|| {
        quote! {
            assert!(
                ::core::mem::size_of::<#element_ty>() <= 64 * (#emin),
                "a Vec element takes more than 64 bytes of memory per byte it takes on \
                 the wire: a hostile count would make a reader allocate that much (hold \
                 large elements in a Vec of their own, or use InlineVec)"
            );
        }
    });
    Gen {
        serialize: quote! {
            let v = &mut #place;
            let mut n = #k::ArrayStorage::count(v);
            #k::ByteStream::length(s, #name, &mut n, #max_len, #emin)?;
            if S::READING {
                #k::ArrayStorage::reset(v, n);
            }
            #k::ByteStream::scope(s, #name, |s| {
                for (i, item) in #k::ArrayStorage::items_mut(v).iter_mut().enumerate() {
                    #k::ByteStream::index(s, i, |s| {
                        #eser
                        ::core::result::Result::Ok(())
                    })?;
                }
                ::core::result::Result::Ok(())
            })?;
        },
        min: quote!(1),
        max: quote!(#st::varint_len(#max_len) + (#max_len) * (#emax)),
        plain: quote!(false),
        schema: quote!(::std::format!(
            "type = \"array\", max_len = {}, element = {{ {} }}",
            #max_len,
            #eschema
        )),
        asserts: quote! {
            #easserts
            assert!(
                (#emin) >= 1,
                "an array element must take at least one byte: a count of empty \
                 elements is not bounded by the bytes that remain"
            );
            assert!((#max_len) <= #st::MAX_BODY, "an array's max_len is at most 65529 (the largest body)");
            #grows
        },
    }
}

/// The compile-time checks of a `max_id`: a network id in `1..=u32::MAX`.
fn id_asserts(max: &Expr) -> TokenStream {
    quote!(assert!(
        (#max) as i128 >= 1 && (#max) as i128 <= u32::MAX as i128,
        "max_id lies in 1..=4294967295 (a network id is a u32, 0 for none)"
    );)
}

/// The compile-time checks of a range on `prim`: `0 <= min <= max <= prim::MAX`, or
/// `abs_max >= 0` (constant expressions too; literals are checked with a span already).
fn range_asserts(check: &Check, prim: &str) -> TokenStream {
    let t = Ident::new(prim, Span::call_site());
    match check {
        Check::None => quote!(),
        Check::Range(lo, hi) => quote!(assert!(
            (#lo) as i128 >= 0 && (#lo) as i128 <= (#hi) as i128 && (#hi) as i128 <= #t::MAX as i128,
            "a range lies in 0..=the type's largest value, its minimum at most its maximum"
        );),
        Check::Abs(m) => quote!(assert!((#m) as i128 >= 0, "abs_max is at least 0");),
    }
}
