//! The table of wire forms: every attribute key of both derives ([`Key`]: its name, the derive
//! that reads it, its role and which keys it combines with), the bit-packed wire forms as written
//! ([`Form`], with their parameters) and as resolved against the field's type ([`Kind`]: how each
//! is read and written through the `Stream`, which traces it, its fewest bits and its schema
//! text).
//!
//! Adding a bit-packed primitive starts here: a [`Key`] (its name and role), a [`Form`] (what the
//! attribute holds, parsed in `attrs.rs`), a [`Kind`] (what it sends); the compiler then points at
//! each `match` that must learn it: the parser (`attrs.rs`), the check against the field's type
//! (`fields.rs`, `kind_of`), and here the serialize call, the fewest bits and the schema keys.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, Ident, Type};

/// The attribute namespace a key is read in: `#[bitlens(...)]` or `#[batch(...)]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ns {
    Bitlens,
    Batch,
}

impl Ns {
    /// The attribute's name.
    pub fn attribute(self) -> &'static str {
        match self {
            Ns::Bitlens => "bitlens",
            Ns::Batch => "batch",
        }
    }
}

/// What a key says about a field.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A wire form of its own (`#[bitlens]`): a field has one.
    Form,
    /// A bound a form takes (`max_len` of a String, a Vec or a wide string).
    Bound,
    /// A batch field's own wire choice (`packed`, `pod`) or its range check (`abs_max`, `max_id`).
    Batch,
    /// The attributes of an array's elements.
    Element,
    /// A marker on the wire around the field (check markers, alignment).
    Marker,
    /// `if` / `unless`: whether the field is sent.
    Guard,
    /// The field's name on the wire, or its Option's flag.
    Naming,
    /// Where the field's value goes: inline (`flatten`), nowhere (`skip`), or to its sparse
    /// array (`sparse_index`).
    Layout,
}

/// Declares [`Key`] and [`Key::ALL`] from one list, so the list holds every key, in order.
macro_rules! keys {
    ($($key:ident,)*) => {
        /// Every key of a field's attributes, in both namespaces.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum Key {
            $($key,)*
        }

        impl Key {
            /// Every key, in the order the error messages list them.
            pub const ALL: &'static [Key] = &[$(Key::$key,)*];
        }
    };
}

keys! {
    Name,
    Packed,
    Range,
    AbsMax,
    Bits,
    Compressed,
    Quaternion,
    Fixed,
    MaxLen,
    MaxId,
    Pod,
    Len,
    WString,
    Element,
    ObjectIndex,
    IntRelative,
    Sparse,
    SparseIndex,
    Align,
    AlignAfter,
    Check,
    CheckAfter,
    If,
    Unless,
    Flag,
    Flatten,
    Skip,
}

impl Key {
    /// The key as written, its role, and whether `#[bitlens]` and `#[batch]` read it: the one
    /// row a new key adds (beside its name in `keys!`).
    const fn row(self) -> (&'static str, Role, bool, bool) {
        match self {
            Key::Name => ("name", Role::Naming, true, true),
            Key::Packed => ("packed", Role::Batch, false, true),
            Key::Range => ("range", Role::Form, true, true),
            Key::AbsMax => ("abs_max", Role::Batch, false, true),
            Key::Bits => ("bits", Role::Form, true, false),
            Key::Compressed => ("compressed", Role::Form, true, false),
            Key::Quaternion => ("quaternion", Role::Form, true, false),
            Key::Fixed => ("fixed", Role::Form, true, false),
            Key::MaxLen => ("max_len", Role::Bound, true, true),
            Key::MaxId => ("max_id", Role::Batch, false, true),
            Key::Pod => ("pod", Role::Batch, false, true),
            Key::Len => ("len", Role::Form, true, false),
            Key::WString => ("wstring", Role::Form, true, false),
            Key::Element => ("element", Role::Element, true, true),
            Key::ObjectIndex => ("object_index", Role::Form, true, false),
            Key::IntRelative => ("int_relative", Role::Form, true, false),
            Key::Sparse => ("sparse", Role::Form, true, false),
            Key::SparseIndex => ("sparse_index", Role::Layout, true, false),
            Key::Align => ("align", Role::Marker, true, false),
            Key::AlignAfter => ("align_after", Role::Marker, true, false),
            Key::Check => ("check", Role::Marker, true, false),
            Key::CheckAfter => ("check_after", Role::Marker, true, false),
            Key::If => ("if", Role::Guard, true, true),
            Key::Unless => ("unless", Role::Guard, true, true),
            Key::Flag => ("flag", Role::Naming, true, false),
            Key::Flatten => ("flatten", Role::Layout, true, false),
            Key::Skip => ("skip", Role::Layout, true, true),
        }
    }

    /// The key as written.
    pub fn name(self) -> &'static str {
        self.row().0
    }

    pub fn role(self) -> Role {
        self.row().1
    }

    /// Whether attributes of the namespace `ns` take this key.
    pub fn read_in(self, ns: Ns) -> bool {
        let (_, _, bitlens, batch) = self.row();
        match ns {
            Ns::Bitlens => bitlens,
            Ns::Batch => batch,
        }
    }

    /// The key `name` of the namespace `ns`.
    pub fn parse(ns: Ns, name: &str) -> Option<Key> {
        Key::ALL
            .iter()
            .copied()
            .find(|k| k.read_in(ns) && k.name() == name)
    }

    /// The keys of `ns`, as an error message lists them.
    pub fn list(ns: Ns) -> String {
        let names: Vec<&str> = Key::ALL
            .iter()
            .copied()
            .filter(|k| k.read_in(ns))
            .map(Key::name)
            .collect();
        names.join(", ")
    }

    /// Whether this key goes with the wire form `form` on one field rather than being a second
    /// wire form: a bound with the form it bounds (`max_len` with `wstring`).
    pub fn joins(self, form: Key) -> bool {
        matches!((self, form), (Key::MaxLen, Key::WString))
    }

    /// Whether this key may stand beside `flatten`: a flattened struct's fields keep their own
    /// names and attributes, so only markers go around it.
    pub fn beside_flatten(self) -> bool {
        self == Key::Flatten || self.role() == Role::Marker
    }

    /// Whether this key may stand beside `sparse_index`: the sparse array sends the index
    /// itself, so only its name is the field's own.
    pub fn beside_sparse_index(self) -> bool {
        matches!(self, Key::SparseIndex | Key::Name)
    }
}

/// A value given either as parameters or as a path to a constant of the spec's type.
pub enum Spec<P> {
    Params(P),
    Path(Expr),
}

pub struct CompressedParams {
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub resolution: Option<Expr>,
    pub delta: Option<Expr>,
    pub max_integer_value: Option<Expr>,
    pub span: Span,
}

pub struct FixedParams {
    pub integer_bits: Option<Expr>,
    pub fraction_bits: Option<Expr>,
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub unsigned: bool,
    pub span: Span,
}

/// Where a relative index or integer finds its previous value.
#[derive(Clone)]
pub enum Prev {
    Field(Ident),
    Const(Expr),
}

pub struct Relative {
    pub max_objects: Option<Expr>,
    pub previous: Option<Prev>,
    pub span: Span,
}

/// A wire form as its attribute gives it (before it is checked against the field's type).
pub enum Form {
    /// `range = MIN..=MAX` (`#[batch]`: the range check of a number).
    Range(Expr, Expr),
    /// `bits = N`.
    Bits(Expr),
    /// `compressed(...)` or `compressed = CONST`.
    Compressed(Spec<CompressedParams>),
    /// `quaternion(bits = N)` or `quaternion = CONST`.
    Quaternion(Spec<Expr>),
    /// `fixed(...)` or `fixed = CONST`.
    Fixed(Spec<FixedParams>),
    /// `len = N` (a `Vec<u8>` of raw bytes).
    Len(Expr),
    /// `wstring` (with `max_len`).
    WString,
    /// `object_index(max_objects = N, previous = P)`.
    ObjectIndex(Relative),
    /// `int_relative(previous = P)`.
    IntRelative(Relative),
    /// `sparse(max_objects = N)`.
    Sparse(Expr),
}

impl Form {
    /// The key that gives it.
    pub fn key(&self) -> Key {
        match self {
            Form::Range(..) => Key::Range,
            Form::Bits(_) => Key::Bits,
            Form::Compressed(_) => Key::Compressed,
            Form::Quaternion(_) => Key::Quaternion,
            Form::Fixed(_) => Key::Fixed,
            Form::Len(_) => Key::Len,
            Form::WString => Key::WString,
            Form::ObjectIndex(_) => Key::ObjectIndex,
            Form::IntRelative(_) => Key::IntRelative,
            Form::Sparse(_) => Key::Sparse,
        }
    }
}

/// What a field is on the wire.
pub enum Kind {
    /// Through the type's own `BitPacked` impl.
    Plain(Type),
    /// `int_as` over a range (integers up to 32 bits, and `i64`).
    Int {
        min: Expr,
        max: Expr,
    },
    /// `int128` over a range (`u64`, `i128`, `u128`).
    Int128 {
        min: Expr,
        max: Expr,
    },
    Bits(Expr),
    Compressed {
        spec: Ident,
        vector: bool,
        params: CfSchema,
    },
    Quaternion {
        spec: Ident,
    },
    Fixed {
        spec: Ident,
    },
    Str {
        max_len: Expr,
    },
    WStr {
        max_len: Expr,
    },
    BytesVec {
        len: Expr,
    },
    Array {
        max_len: Expr,
        element: Box<Kind>,
    },
    Sparse {
        max_objects: Expr,
        element: Type,
    },
    ObjectIndex {
        max_objects: Expr,
        previous: PrevCode,
    },
    IntRelative {
        previous: PrevCode,
    },
}

/// How the schema writes a compressed float: its range and resolution, or its precomputed
/// constants (taken from the spec at run time).
pub enum CfSchema {
    Range(Box<(Expr, Expr, Expr)>),
    Precomputed,
}

/// A previous value resolved: a constant, or a sibling field's place and wire name.
#[derive(Clone)]
pub enum PrevCode {
    Const(Expr),
    Field { place: TokenStream, wire: String },
}

fn prev_tokens(p: &PrevCode) -> TokenStream {
    match p {
        PrevCode::Const(e) => quote!((#e) as i64),
        PrevCode::Field { place, .. } => quote!((#place) as i64),
    }
}

impl Kind {
    /// Statements serializing the value at `place` (an lvalue) under the wire name `name` (an
    /// expression of type `&str`) on the stream `s`; each ends with `?;`.
    pub fn serialize(&self, k: &syn::Path, place: &TokenStream, name: &TokenStream) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote! {
                <#ty as #k::BitPacked>::serialize_field(&mut #place, s, #name)?;
            },
            Kind::Int { min, max } => quote! {
                s.int_as(#name, &mut #place, (#min) as _, (#max) as _)?;
            },
            Kind::Int128 { min, max } => quote! {
                #k::packed::int128_as(s, #name, &mut #place, (#min) as i128, (#max) as i128)?;
            },
            Kind::Bits(n) => quote! {
                #k::packed::bits_as(s, #name, &mut #place, (#n) as u32)?;
            },
            Kind::Compressed { spec, vector, .. } => {
                if *vector {
                    quote! { s.compressed_vec3(#name, &mut #place, &#spec)?; }
                } else {
                    quote! { s.compressed_f32(#name, &mut #place, &#spec)?; }
                }
            }
            Kind::Quaternion { spec } => quote! {
                s.quaternion(#name, &mut #place, &#spec)?;
            },
            Kind::Fixed { spec } => quote! {
                s.fixed_as(#name, &mut #place, &#spec)?;
            },
            Kind::Str { max_len } => quote! {
                s.string(#name, &mut #place, (#max_len) as usize)?;
            },
            Kind::WStr { max_len } => quote! {
                s.wstring(#name, &mut #place, (#max_len) as usize)?;
            },
            Kind::BytesVec { len } => quote! {
                s.bytes_vec(#name, &mut #place, (#len) as usize)?;
            },
            Kind::Array { max_len, element } => {
                let min = element.min_bits(k);
                let elem = element.serialize_element(k);
                quote! {
                    s.array(#name, &mut #place, (#max_len) as usize, #min, |s, __e| {
                        #elem
                        ::core::result::Result::Ok(())
                    })?;
                }
            }
            Kind::Sparse { max_objects, .. } => quote! {
                #k::packed::sparse_array(s, #name, &mut #place, (#max_objects) as i64)?;
            },
            Kind::ObjectIndex {
                max_objects,
                previous,
            } => {
                let prev = prev_tokens(previous);
                quote! {
                    {
                        let mut __x = (#place) as i64;
                        s.object_index(#name, #prev, &mut __x, (#max_objects) as i64)?;
                        if S::READING {
                            #place = __x as _;
                        }
                    }
                }
            }
            Kind::IntRelative { previous } => {
                let prev = prev_tokens(previous);
                quote! {
                    {
                        let mut __x = (#place) as i64;
                        s.int_relative(#name, #prev, &mut __x)?;
                        if S::READING {
                            #place = __x as _;
                        }
                    }
                }
            }
        }
    }

    /// Statements serializing an array element `__e: &mut T` (name `""`; a struct's fields
    /// straight into the element's scope).
    fn serialize_element(&self, k: &syn::Path) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote! {
                <#ty as #k::BitPacked>::serialize(__e, s)?;
            },
            other => other.serialize(k, &quote!(*__e), &quote!("")),
        }
    }

    /// The fewest bits a value takes (a `usize` constant expression).
    pub fn min_bits(&self, k: &syn::Path) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote!(<#ty as #k::BitPacked>::MIN_BITS),
            Kind::Int { min, max } => {
                quote!(#k::bits_required((#min) as i64, (#max) as i64) as usize)
            }
            Kind::Int128 { min, max } => {
                quote!(#k::packed::int128_bits((#min) as i128, (#max) as i128))
            }
            Kind::Bits(n) => quote!((#n) as usize),
            Kind::Compressed { spec, vector, .. } => {
                let n = if *vector { 3usize } else { 1 };
                quote!(#n * #spec.width() as usize)
            }
            Kind::Quaternion { spec } | Kind::Fixed { spec } => quote!(#spec.width() as usize),
            Kind::Str { max_len } | Kind::WStr { max_len } | Kind::Array { max_len, .. } => {
                quote!(#k::packed::count_bits((#max_len) as usize))
            }
            Kind::BytesVec { len } => quote!((#len) as usize * 8),
            Kind::Sparse { .. } | Kind::ObjectIndex { .. } | Kind::IntRelative { .. } => quote!(1),
        }
    }

    /// An expression of type `String`: the field's schema keys (`type = ...` and its
    /// parameters), with the schema writer `w` in scope.
    pub fn schema(&self, k: &syn::Path) -> TokenStream {
        let p = quote!(#k::packed);
        match self {
            Kind::Plain(ty) => quote!(<#ty as #k::BitPacked>::schema_type(w)),
            Kind::Int { min, max } => quote! {
                ::std::format!("type = \"int\", min = {}, max = {}", (#min) as i64, (#max) as i64)
            },
            Kind::Int128 { min, max } => quote! {
                ::std::format!(
                    "type = \"int128\", min = {}, max = {}",
                    #p::toml_int((#min) as i128),
                    #p::toml_int((#max) as i128)
                )
            },
            Kind::Bits(n) => quote!(::std::format!("type = \"bits\", bits = {}", #n)),
            Kind::Compressed {
                spec,
                vector,
                params,
            } => {
                let t = if *vector {
                    "compressed_vector"
                } else {
                    "compressed_float"
                };
                match params {
                    CfSchema::Range(range) => {
                        let (min, max, res) = &**range;
                        quote! {
                            ::std::format!(
                                "type = \"{}\", min = {}, max = {}, resolution = {}",
                                #t,
                                #p::toml_f32({ let v: f32 = #min; v }),
                                #p::toml_f32({ let v: f32 = #max; v }),
                                #p::toml_f32({ let v: f32 = #res; v })
                            )
                        }
                    }
                    CfSchema::Precomputed => quote! {
                        ::std::format!(
                            "type = \"{}\", min = {}, delta = {}, max_integer_value = {}",
                            #t,
                            #p::toml_f32(#spec.min()),
                            #p::toml_f32(#spec.params().delta),
                            #spec.params().max_integer_value
                        )
                    },
                }
            }
            Kind::Quaternion { spec } => {
                quote!(::std::format!("type = \"quaternion\", bits = {}", #spec.bits()))
            }
            Kind::Fixed { spec } => quote! {
                ::std::format!(
                    "type = \"fixed\", integer_bits = {}, fraction_bits = {}, min = {}, max = {}{}",
                    #spec.integer_bits(),
                    #spec.fraction_bits(),
                    #spec.min(),
                    #spec.max(),
                    if #spec.signed() { "" } else { ", unsigned = true" }
                )
            },
            Kind::Str { max_len } => {
                quote!(::std::format!("type = \"string\", max_len = {}", #max_len))
            }
            Kind::WStr { max_len } => {
                quote!(::std::format!("type = \"wstring\", max_len = {}", #max_len))
            }
            Kind::BytesVec { len } => quote!(::std::format!("type = \"bytes\", len = {}", #len)),
            Kind::Array { max_len, element } => {
                let e = element.schema(k);
                quote!(::std::format!(
                    "type = \"array\", max_len = {}, element = {{ {} }}",
                    #max_len,
                    #e
                ))
            }
            Kind::Sparse {
                max_objects,
                element,
            } => quote! {
                {
                    let keys = <#element as #k::BitPacked>::schema_type(w);
                    let index = <#element as #k::packed::SparseElement>::INDEX_NAME;
                    ::std::format!(
                        "type = \"sparse_array\", max_objects = {}, element = {}{}",
                        #max_objects,
                        #p::toml_str(#p::named_type(&keys)),
                        if index == "index" {
                            ::std::string::String::new()
                        } else {
                            ::std::format!(", index_name = {}", #p::toml_str(index))
                        }
                    )
                }
            },
            Kind::ObjectIndex {
                max_objects,
                previous,
            } => {
                let prev = prev_schema(k, previous);
                quote!(::std::format!(
                    "type = \"object_index\", max_objects = {}, previous = {}",
                    #max_objects,
                    #prev
                ))
            }
            Kind::IntRelative { previous } => {
                let prev = prev_schema(k, previous);
                quote!(::std::format!("type = \"int_relative\", previous = {}", #prev))
            }
        }
    }
}

fn prev_schema(k: &syn::Path, p: &PrevCode) -> TokenStream {
    match p {
        PrevCode::Const(e) => quote!(((#e) as i64).to_string()),
        PrevCode::Field { wire, .. } => quote!(#k::packed::toml_str(#wire)),
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Ns, Role};

    #[test]
    fn each_namespace_lists_its_keys_as_the_messages_always_have() {
        // The lists the unknown-key errors print (once hand-kept strings: FIELD_KEYS).
        assert_eq!(
            Key::list(Ns::Bitlens),
            "name, range, bits, compressed, quaternion, fixed, max_len, len, wstring, element, \
             object_index, int_relative, sparse, sparse_index, align, align_after, check, \
             check_after, if, unless, flag, flatten, skip"
        );
        assert_eq!(
            Key::list(Ns::Batch),
            "name, packed, range, abs_max, max_len, max_id, pod, element, if, unless, skip"
        );
    }

    #[test]
    fn every_key_parses_back_in_its_namespaces_only() {
        for &key in Key::ALL {
            for ns in [Ns::Bitlens, Ns::Batch] {
                let found = Key::parse(ns, key.name());
                assert_eq!(found == Some(key), key.read_in(ns), "{key:?}");
            }
            assert!(
                key.read_in(Ns::Bitlens) || key.read_in(Ns::Batch),
                "{key:?} unread"
            );
        }
        assert_eq!(Key::parse(Ns::Batch, "bits"), None);
        assert_eq!(Key::parse(Ns::Bitlens, "packed"), None);
    }

    #[test]
    fn one_wire_form_a_field_but_a_bound_joins_its_form() {
        let forms: Vec<Key> = Key::ALL
            .iter()
            .copied()
            .filter(|k| k.read_in(Ns::Bitlens) && k.role() == Role::Form)
            .collect();
        assert_eq!(forms.len(), 10);
        for a in &forms {
            for b in &forms {
                assert!(!a.joins(*b), "{a:?} {b:?}");
            }
        }
        assert!(Key::MaxLen.joins(Key::WString));
        assert!(!Key::MaxLen.joins(Key::Range));
    }

    #[test]
    fn flatten_and_sparse_index_take_what_their_place_allows() {
        // The lists body.rs kept by hand, now said by each key's role.
        let beside = |f: fn(Key) -> bool| -> Vec<&str> {
            Key::ALL
                .iter()
                .copied()
                .filter(|k| k.read_in(Ns::Bitlens) && f(*k))
                .map(Key::name)
                .collect()
        };
        assert_eq!(
            beside(Key::beside_flatten),
            ["align", "align_after", "check", "check_after", "flatten"]
        );
        assert_eq!(beside(Key::beside_sparse_index), ["name", "sparse_index"]);
    }
}
