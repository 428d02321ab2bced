//! `warren acp --agent A`: the Agent Client Protocol for one agent over a byte stream (the
//! binary passes its stdin and stdout).

use crate::Warren;
use tokio::io::{AsyncRead, AsyncWrite};
use warren_acp::AcpError;
use warren_types::{ApiError, ErrorCode};

fn acp_error(e: AcpError) -> ApiError {
    match e {
        AcpError::Host(h) => crate::host_error(h),
        AcpError::Db(d) => ApiError::new(ErrorCode::Storage, d.to_string()),
        AcpError::Io(i) => ApiError::new(ErrorCode::Io, i.to_string()),
    }
}

impl Warren {
    /// Serves ACP for `agent` until the client closes `input`. `pid` is this process, recorded
    /// with each ACP session so a crash leaves an ended session, not a live one.
    pub async fn serve_acp<R, W>(
        &self,
        agent: &str,
        pid: u32,
        input: R,
        output: W,
    ) -> Result<(), ApiError>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let host = self.host().await?;
        warren_acp::serve(host, agent, pid, input, output)
            .await
            .map_err(acp_error)
    }
}
