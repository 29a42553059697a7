//! The model stage: inputs to the plain data each page shows. No I/O, no
//! HTML and no templates: what a figure says, in which order, with which
//! link, decided once for every page that shows it.

pub mod baseline;
pub mod catalog;
pub mod charts;
pub mod compare;
pub mod display;
pub mod history;
pub mod matrix;
pub mod results;
pub mod runs;
pub mod table;
pub mod tierchart;
pub mod transcripts;
