"""The one way Memoir connects to Temporal: pydantic data converter with the encryption codec,
same settings everywhere."""

from temporalio.client import Client

from memoir.crypto import Keyring, load_master_key
from memoir.crypto.master import configured_master_key
from memoir.db import Pool
from memoir.settings import Settings
from memoir.telemetry import MemoirTracingInterceptor
from temporal.codec import encrypted_data_converter
from temporal.connection import connect_options


def open_keyring(settings: Settings, pool: Pool, *, create_master_key: bool = False) -> Keyring:
    """The data keys in `pool`, wrapped by `MEMOIR_MASTER_KEY` or the data folder's `master.key`
    (made when `create_master_key`, as `memoir dev` does); MasterKeyMissing otherwise."""
    secret = configured_master_key(settings.master_key)
    master = load_master_key(secret, settings.data_dir, create=create_master_key)
    return Keyring(pool, master)


async def connect(settings: Settings, keyring: Keyring) -> Client:
    """Connect to the Temporal frontend named by `TEMPORAL_ADDRESS` / `TEMPORAL_NAMESPACE`;
    every payload is encrypted under its user's data key from `keyring`."""
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal_namespace,
        data_converter=encrypted_data_converter(keyring),
        interceptors=[MemoirTracingInterceptor()],  # traces through workflows and activities
        **connect_options(settings),  # TLS / API key (Temporal Cloud)
    )
