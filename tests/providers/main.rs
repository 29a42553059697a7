//! Protocol tests of the HTTP providers and the judge against loopback fake
//! servers that reproduce each provider's documented request and response JSON.

mod bodies;
mod fake;
mod faults;
mod gemini;
mod judge;
mod ollama;
mod openai;
