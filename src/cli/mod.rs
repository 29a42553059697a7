//! The command line's types (clap), on the binary's side: library code
//! takes the plain options these turn into.

pub mod publish;
pub mod run;
