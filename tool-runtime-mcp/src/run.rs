//! One call of a tool, run where it belongs: on this task, or on a blocking thread (see
//! [`Pace`]), holding its caller's turn.

use std::sync::Arc;

use tool_runtime::{CallOutput, Context, ToolError, ToolRef, ToolSet};

use crate::arguments::CallArguments;
use crate::limits::Turn;
use crate::pace::{Lane, Pace, Timed};

/// Runs one call holding its turn: an async tool, or a sync one that does not block, on this
/// task; a sync tool that may block on a blocking thread (which keeps the turn until it
/// returns, so a tool stopped by its time limit still counts while its thread runs), or on this
/// task once its calls have proven fast (see [`Pace`]).
pub(crate) async fn run(
    tools: Arc<ToolSet>,
    tool: ToolRef,
    cx: Arc<Context>,
    mut arguments: CallArguments,
    turn: Turn,
    pace: &Pace,
) -> Result<CallOutput, ToolError> {
    // A tool that commits waits for its commit point's answer by blocking: never on a worker.
    let timed = if tool.blocks() && tool.commits() {
        None
    } else if tool.blocks() {
        let mut lane = pace.lane(tool.name());
        if let Lane::Taken(_) = lane {
            // The calls on the workers take microseconds: after a yield, one has likely ended.
            tokio::task::yield_now().await;
            lane = pace.lane(tool.name());
        }
        match lane {
            Lane::Worker(on_worker) => {
                let out = tools.call(&cx, tool.name(), arguments.take()).await;
                on_worker.finish();
                drop(turn);
                return out;
            }
            Lane::Pool(timed) => timed,
            // Still taken: the pool.
            Lane::Taken(timed) => Some(timed),
        }
    } else {
        let out = tools.call(&cx, tool.name(), arguments.take()).await;
        drop(turn);
        return out;
    };
    // The request's span and subscriber go with the call to the blocking thread: the tool's
    // span is the request span's child, in the same subscriber.
    let span = tracing::Span::current();
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let blocking = tokio::task::spawn_blocking(move || {
        let _subscriber = tracing::dispatcher::set_default(&dispatch);
        let _entered = span.enter();
        let timed = timed.map(Timed::restarted);
        let out = tools.call(&cx, tool.name(), arguments.take()).blocking();
        if let Some(timed) = timed {
            timed.finish();
        }
        drop(turn);
        out
    });
    blocking.await.unwrap_or_else(|e| Err(thread_lost(&e)))
}

/// A call whose blocking thread ended without its answer (the tool panicked past the call's
/// own guard, or the runtime shut down).
pub(crate) fn thread_lost(e: &tokio::task::JoinError) -> ToolError {
    ToolError::Panicked {
        message: e.to_string(),
        to_model: false,
    }
}
