//! Sending closures for the tests that answer the agent loop with recorded responses: each
//! request the loop writes is checked as a provider checks it ([`PrefixCheck`]: it extends the
//! last one of its conversation, the model's last turn sent back exactly as it came), so these
//! tests run under the same check as those with a `TestModel`.

use std::collections::VecDeque;
use std::future::{Ready, ready};

use serde_json::Value;
use tool_runtime::ToolSet;
use tool_runtime::agent::Conversation;
use tool_runtime::provider::{Api, Request};
use tool_runtime::testing::PrefixCheck;

/// A sending closure of `api` that writes each request (with `tools`), checks it, and answers
/// with `replies` in order; a request the check refuses, or one past the last reply, is the
/// run's transport error.
pub fn replying<'a>(
    api: Api,
    tools: &'a ToolSet,
    replies: impl IntoIterator<Item = Value>,
) -> impl FnMut(&Conversation) -> Ready<Result<Value, String>> + 'a {
    let request = Request::new("model").tools(tools);
    let mut check = PrefixCheck::new(api);
    let mut replies: VecDeque<Value> = replies.into_iter().collect();
    move |conversation: &Conversation| {
        let answer = (|| {
            let http = conversation.request(&request).map_err(|e| e.to_string())?;
            check.request(&http).map_err(|e| e.to_string())?;
            let reply = replies.pop_front().ok_or("no reply left")?;
            check.response(&reply);
            Ok(reply)
        })();
        ready(answer)
    }
}

/// [`replying`] with the same reply to every request.
pub fn always<'a>(
    api: Api,
    tools: &'a ToolSet,
    reply: Value,
) -> impl FnMut(&Conversation) -> Ready<Result<Value, String>> + 'a {
    replying(api, tools, std::iter::repeat_n(reply, 64))
}
