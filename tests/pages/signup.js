// A plain page (no WebMCP): the form shows what was submitted in #result, without navigating.
document.getElementById('signup').addEventListener('submit', (event) => {
  event.preventDefault();
  const data = new FormData(event.target);
  const result = document.getElementById('result');
  result.textContent = data.get('terms')
    ? `Welcome ${data.get('name')} <${data.get('email')}> on the ${data.get('plan')} plan`
    : 'Please accept the terms';
});
