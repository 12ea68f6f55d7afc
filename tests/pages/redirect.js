// An open redirect: wherever ?to= says.
location.replace(new URLSearchParams(location.search).get('to'));
