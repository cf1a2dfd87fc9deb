//! The boxed future async tools, approval stores and middleware return.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future, as returned by async tools, approval stores and middleware.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
