"""The one way Memoir connects to Temporal: pydantic data converter, same settings everywhere."""

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from memoir.settings import Settings
from memoir.telemetry import MemoirTracingInterceptor
from temporal.connection import connect_options


async def connect(settings: Settings) -> Client:
    """Connect to the Temporal frontend named by `TEMPORAL_ADDRESS` / `TEMPORAL_NAMESPACE`."""
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=pydantic_data_converter,
        interceptors=[MemoirTracingInterceptor()],  # traces through workflows and activities
        **connect_options(settings),  # TLS / API key (Temporal Cloud)
    )
