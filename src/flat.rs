//! Groups of settings declared once and read, flat, by several tables of the configuration file.
//!
//! A `[[cluster]]` table holds the connection settings beside the cluster's own keys, and
//! `[auth]`, `[auth.admin]` and each `[[notifier]]` hold the same credential keys beside theirs:
//! all on one level, an unknown key refused, and every error naming its line. serde's `flatten`
//! cannot read tables so: it does not combine with `deny_unknown_fields`, and a value it reads
//! is buffered first, so that its error loses its line. A nested table (`[cluster.connect]`)
//! would change the format of the files users have. Hence a macro, on purpose: a group is
//! declared once with [`group!`], which makes the group's struct and a second macro that writes
//! the group's fields, by name and in the table's order, among a table's own fields. serde then
//! reads a plain derived struct whose keys are all its own (unknown keys refused with today's
//! words, the expected keys listed in the file's order, lines kept), and one generated `From`
//! moves the group's fields into the group's struct; it names every field of the group, so a
//! field added to a group and forgotten in a table does not compile.

/// Declares a group of settings: its struct, and a macro (`$table`) that declares a struct
/// reading the group's fields among its own. Both are reached at `crate::$home`, a top-level
/// module (re-exported there when declared deeper).
///
/// ```ignore
/// flat::group! { $
///     /// The group's documentation.
///     #[derive(Clone, Debug)]
///     pub struct Group in home as group => group_table {
///         /// A field's documentation (clap's help, when the group is also a set of flags).
///         struct[#[arg(long)]] file[#[serde(default)]]
///         field: bool,
///     }
/// }
/// ```
///
/// Each field carries its attributes in the group's struct (`struct[…]`) and in a table's
/// (`file[…]`). The leading `$` is handed to the second macro, whose own variables a
/// `macro_rules!` could not write otherwise.
///
/// The second macro takes the struct to read into (deserialized `from` its table, so that serde
/// reads the table) and the name of the table:
///
/// ```ignore
/// home::group_table! {
///     #[derive(Deserialize)]
///     #[serde(from = "ThingTable")]
///     pub struct Thing {
///         pub own: String,
///         group.field,
///         skip group.other,
///     }
///     #[derive(Deserialize)]
///     #[serde(deny_unknown_fields)]
///     struct ThingTable;
/// }
/// ```
///
/// `Thing` gets its own fields and `pub group: Group`; `ThingTable` has every field flat, in the
/// order written (`skip` ones are not keys of this table: they take their default), and turns
/// into a `Thing`. Every field ends with a comma.
macro_rules! group {
    (
        $d:tt
        $(#[$meta:meta])*
        pub struct $group:ident in $home:ident as $field:ident => $table:ident {
            $(
                $(#[doc = $doc:literal])*
                struct[$($in_struct:tt)*] file[$($in_file:tt)*]
                $name:ident: $ty:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $group {
            $(
                $(#[doc = $doc])*
                $($in_struct)*
                pub $name: $ty,
            )*
        }

        macro_rules! $table {
            // A field of the group, read by this table.
            $(
                (@fields $d table_head:tt $d head:tt [$d($d own:tt)*] [$d($d flat:tt)*]
                 $field . $name, $d($d rest:tt)*) => {
                    crate::$home::$table!(@fields $d table_head $d head [$d($d own)*]
                        [$d($d flat)* $($in_file)* $name: $ty,] $d($d rest)*);
                };
                (@fields $d table_head:tt $d head:tt [$d($d own:tt)*] [$d($d flat:tt)*]
                 skip $field . $name, $d($d rest:tt)*) => {
                    crate::$home::$table!(@fields $d table_head $d head [$d($d own)*]
                        [$d($d flat)* #[serde(skip)] $name: $ty,] $d($d rest)*);
                };
            )*
            // A field of the struct's own.
            (@fields $d table_head:tt $d head:tt [$d($d own:tt)*] [$d($d flat:tt)*]
             $d(#[$d m:meta])* $d v:vis $d f:ident: $d t:ty, $d($d rest:tt)*) => {
                crate::$home::$table!(@fields $d table_head $d head
                    [$d($d own)* $d(#[$d m])* $d v $d f: $d t,]
                    [$d($d flat)* $d(#[$d m])* $d v $d f: $d t,] $d($d rest)*);
            };
            // Every field placed: the struct, its table, and the one move between them.
            (@fields [$d(#[$d tm:meta])* $d tn:ident] [$d(#[$d sm:meta])* $d sv:vis $d sn:ident]
             [$d($d(#[$d om:meta])* $d ov:vis $d of:ident: $d ot:ty,)*] [$d($d flat:tt)*]) => {
                $d(#[$d sm])*
                $d sv struct $d sn {
                    $d($d(#[$d om])* $d ov $d of: $d ot,)*
                    pub $field: crate::$home::$group,
                }

                $d(#[$d tm])*
                struct $d tn {
                    $d($d flat)*
                }

                impl From<$d tn> for $d sn {
                    fn from(table: $d tn) -> $d sn {
                        $d sn {
                            $d($d of: table.$d of,)*
                            $field: crate::$home::$group { $($name: table.$name,)* },
                        }
                    }
                }
            };
            (
                $d(#[$d sm:meta])* $d sv:vis struct $d sn:ident { $d($d body:tt)* }
                $d(#[$d tm:meta])* struct $d tn:ident;
            ) => {
                crate::$home::$table!(@fields [$d(#[$d tm])* $d tn] [$d(#[$d sm])* $d sv $d sn] [] []
                    $d($d body)*);
            };
        }
        pub(crate) use $table;
    };
}

pub(crate) use group;
