//! The render stage: text to HTML. Markdown (with the VitePress syntax as a
//! preprocessor), highlighting, templates, the last HTML pass (anchors,
//! outline, search sections), the link check and the search index. Every
//! transform here is linear in its input.

pub mod dialect;
pub mod escape;
pub mod highlight;
pub mod html;
pub mod include;
pub mod links;
pub mod markdown;
pub mod search;
pub mod templates;
pub mod url;
pub mod vitepress;
